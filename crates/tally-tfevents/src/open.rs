//! Opening a file to read it as an event file: only a regular file is ever read, and opening
//! never waits (docs/contract/untrusted-input.md "Special files").
//!
//! A FIFO, socket or device named like an event file would block a plain `open` (a FIFO
//! waits for a writer) or a read, and anyone who can create a file in a shared log directory can
//! leave one there. So the path is checked before it is opened, and the file is opened without
//! blocking and checked again (it may have been replaced in between).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What kind of special file `meta` describes (`a FIFO`, `a directory`, ...); `None` for a
/// regular file, the only kind a reader opens.
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    let ty = meta.file_type();
    if ty.is_file() {
        None
    } else if ty.is_dir() {
        Some("a directory")
    } else if ty.is_fifo() {
        Some("a FIFO")
    } else if ty.is_socket() {
        Some("a socket")
    } else if ty.is_char_device() {
        Some("a character device")
    } else if ty.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    }
}

/// The error a reader gives for a special file: it names what the file is.
fn refused(kind: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{kind}, not a regular file: not read"),
    )
}

/// Opens `path` for reading when it is a regular file (a symbolic link to one included), else
/// an error saying what it is. Never blocks: the file is opened with `O_NONBLOCK`, which reading
/// a regular file ignores.
pub fn open_regular(path: &Path) -> io::Result<File> {
    if let Some(kind) = special_kind(&std::fs::metadata(path)?) {
        return Err(refused(kind));
    }
    let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nonblock)
        .open(path)?;
    // Replaced between the check and the open: refused all the same.
    if let Some(kind) = special_kind(&file.metadata()?) {
        return Err(refused(kind));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::open_regular;

    #[test]
    fn a_regular_file_opens_and_a_fifo_or_directory_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("events.out.tfevents.1.h");
        std::fs::write(&file, b"x").unwrap();
        assert!(open_regular(&file).is_ok());
        let fifo = dir.path().join("events.out.tfevents.2.h");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RUSR).unwrap();
        // Opened for reading, a FIFO with no writer would block here.
        let e = open_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let e = open_regular(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
    }
}
