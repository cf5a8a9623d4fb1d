//! The seeded generator of the `session::context` model test (issue 38): one seed, one script.

/// A xorshift64 generator: one seed, one script, on every backend and target.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // Spread small seeds; xorshift stays at 0 once there, so never start there.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        match n {
            0 => 0,
            n => (self.next_u64() % n as u64) as usize,
        }
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        match items.len() {
            0 => None,
            n => Some(items[self.below(n)].clone()),
        }
    }
}
