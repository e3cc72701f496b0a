//! Tori, meshes and hypercubes in slabs across their largest dimension.

use crate::topology::Torus;
use crate::topology::shape::balanced_part;

/// The part of every switch of `torus` cut into `parts` slabs across its largest
/// dimension (the last of equals), and that dimension; `None` when `parts` exceeds it.
pub(super) fn partition(torus: &Torus, parts: u32) -> Option<(Vec<u32>, usize)> {
    let (dimension, &k) = torus.dims.iter().enumerate().max_by_key(|&(d, &k)| (k, d))?;
    if parts > k {
        return None;
    }
    let stride: u32 = torus.dims[..dimension].iter().product();
    let of_switch = (0..torus.switches())
        .map(|s| balanced_part(u64::from(s / stride % k), u64::from(k), u64::from(parts)))
        .collect();
    Some((of_switch, dimension))
}
