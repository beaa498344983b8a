//! A gate a test holds closed to make a sink hang, and opens to let it go on.

use std::sync::{Condvar, Mutex};

#[derive(Default)]
pub struct Gate {
    closed: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    pub fn set(&self, closed: bool) {
        *self.closed.lock().unwrap() = closed;
        self.cv.notify_all();
    }

    /// Waits while the gate is closed.
    pub fn pass(&self) {
        let mut c = self.closed.lock().unwrap();
        while *c {
            c = self.cv.wait(c).unwrap();
        }
    }
}
