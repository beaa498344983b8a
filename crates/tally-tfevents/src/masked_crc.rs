//! Masked CRC-32C, the checksum TFRecord framing stores for the length and the data of each record.

/// Constant added after rotating the CRC; TensorFlow masks CRCs so that a CRC computed over
/// data that itself embeds CRCs does not degenerate.
pub const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a raw CRC-32C the way TensorFlow does: rotate right by 15 bits, then add [`MASK_DELTA`].
#[inline]
pub fn mask_crc(crc: u32) -> u32 {
    // (crc >> 15) | (crc << 17) is exactly a 15-bit right rotation.
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask_crc`], recovering the raw CRC-32C.
#[inline]
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// Computes the masked CRC-32C (Castagnoli) of `bytes`, as stored in TFRecord files.
#[inline]
pub fn masked_crc32c(bytes: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_of_check_string_matches_the_castagnoli_check_value() {
        // The standard check value of CRC-32C ("123456789"), from the CRC catalogue.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    // The formula is spelled out as TensorFlow documents it, to pin the rotation direction.
    #[allow(clippy::manual_rotate)]
    fn mask_is_rotate_right_15_plus_delta() {
        let crc = 0xE306_9283_u32;
        let expected = ((crc >> 15) | (crc << 17)).wrapping_add(0xa282_ead8);
        assert_eq!(mask_crc(crc), expected);
        assert_eq!(masked_crc32c(b"123456789"), expected);
        // Same value from TensorBoard's Python masked_crc32c.
        assert_eq!(masked_crc32c(b"123456789"), 0xc78a_b0e5);
    }

    #[test]
    fn masked_crc_of_empty_record_length_matches_tensorflow() {
        // Value computed by TensorBoard's own Python implementation
        // (tensorboard.compat.tensorflow_stub.pywrap_tensorflow.masked_crc32c) for the
        // eight little-endian bytes of length 0.
        assert_eq!(masked_crc32c(&0u64.to_le_bytes()), EMPTY_LEN_MASKED_CRC);
    }

    #[test]
    fn unmask_inverts_mask() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX, 0xE306_9283] {
            assert_eq!(unmask_crc(mask_crc(crc)), crc);
        }
    }

    const EMPTY_LEN_MASKED_CRC: u32 = 0x0798_0329;
}
