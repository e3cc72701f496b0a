//! A slab: values in a `Vec`, referred to by index, with freed slots reused. No
//! allocation per message or packet once the slab has grown to the peak in flight.

/// Values of type `T` by `u32` index; freed indices are reused.
#[derive(Debug, Clone)]
pub struct Slab<T> {
    slots: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// An empty slab.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`; returns its index.
    pub fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(index) => {
                self.slots[index as usize] = value;
                index
            }
            None => {
                self.slots.push(value);
                self.slots.len() as u32 - 1
            }
        }
    }

    /// Frees `index` for reuse (its value stays until overwritten).
    pub fn release(&mut self, index: u32) {
        self.free.push(index);
    }

    /// Slots ever allocated (the peak number of live values).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

impl<T> std::ops::Deref for Slab<T> {
    type Target = [T];
    /// Every slot, live or freed, by index.
    fn deref(&self) -> &[T] {
        &self.slots
    }
}

impl<T> std::ops::DerefMut for Slab<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_are_reused() {
        let mut s = Slab::new();
        let a = s.insert('a');
        let b = s.insert('b');
        s.release(a);
        let c = s.insert('c');
        assert_eq!((a, b, c), (0, 1, 0));
        assert_eq!((s[b as usize], s[c as usize]), ('b', 'c'));
        assert_eq!(s.capacity(), 2);
    }
}
