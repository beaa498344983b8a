//! MT19937 as numpy's legacy `RandomState` uses it: `seed(s)` = `init_genrand(s)`, masked `randint`.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// The 32-bit Mersenne Twister (Matsumoto & Nishimura), state for state identical to
/// `np.random.RandomState` after `seed(s)` with an integer `s`.
#[derive(Clone)]
pub struct Mt19937 {
    state: [u32; N],
    pos: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937").field("pos", &self.pos).finish()
    }
}

impl Mt19937 {
    /// `init_genrand(seed)`, which is what `np.random.seed(seed)` does for an integer seed.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, pos: N }
    }

    fn twist(&mut self) {
        let mt = &mut self.state;
        for i in 0..N {
            let y = (mt[i] & UPPER_MASK) | (mt[(i + 1) % N] & LOWER_MASK);
            let mut next = mt[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= MATRIX_A;
            }
            mt[i] = next;
        }
        self.pos = 0;
    }

    /// `genrand_int32`: the next tempered 32-bit output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= N {
            self.twist();
        }
        let mut y = self.state[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }
}

/// Draws indices in `[0, n)` exactly like legacy `RandomState.randint(0, n)` (and so
/// `choice(n, size, replace=True)`): with `rng = n - 1` and `mask` the smallest `2^b - 1 ≥ rng`,
/// each index takes 32-bit outputs `v & mask` until one is `≤ rng`. For `n == 1` no output
/// is consumed.
#[derive(Debug, Clone)]
pub struct MaskedIndex {
    rng: u32,
    mask: u32,
}

impl MaskedIndex {
    /// A sampler for `[0, n)`.
    ///
    /// # Panics
    /// If `n == 0` or `n > 2^32` (numpy takes another path above 32 bits; unused here).
    pub fn new(n: usize) -> Self {
        assert!(n >= 1, "population must be non-empty");
        let rng = u32::try_from(n - 1).expect("population above 2^32 is not supported");
        let mut mask = rng;
        mask |= mask >> 1;
        mask |= mask >> 2;
        mask |= mask >> 4;
        mask |= mask >> 8;
        mask |= mask >> 16;
        MaskedIndex { rng, mask }
    }

    /// The next index.
    #[inline]
    pub fn draw(&self, mt: &mut Mt19937) -> u32 {
        if self.rng == 0 {
            return 0;
        }
        loop {
            let v = mt.next_u32() & self.mask;
            if v <= self.rng {
                return v;
            }
        }
    }
}
