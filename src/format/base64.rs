//! Standard base64 (RFC 4648, `+/`, `=` padding), as frugally-deep writes float arrays.

/// Decodes one base64 string. Returns a description of the first problem on bad input.
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!("base64 length {} is not a multiple of 4", bytes.len()));
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (chunk_index, chunk) in bytes.chunks_exact(4).enumerate() {
        let is_last = (chunk_index + 1) * 4 == bytes.len();
        let mut sextets = [0u32; 4];
        let mut padding = 0;
        for (i, &ch) in chunk.iter().enumerate() {
            sextets[i] = match ch {
                b'A'..=b'Z' => (ch - b'A') as u32,
                b'a'..=b'z' => (ch - b'a') as u32 + 26,
                b'0'..=b'9' => (ch - b'0') as u32 + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if is_last && i >= 2 => {
                    padding += 1;
                    0
                }
                _ => {
                    return Err(format!(
                        "invalid base64 character {:?} at offset {}",
                        ch as char,
                        chunk_index * 4 + i
                    ))
                }
            };
            if padding > 0 && ch != b'=' {
                return Err("base64 data after '=' padding".to_string());
            }
        }
        let word = (sextets[0] << 18) | (sextets[1] << 12) | (sextets[2] << 6) | sextets[3];
        let decoded = [(word >> 16) as u8, (word >> 8) as u8, word as u8];
        out.extend_from_slice(&decoded[..3 - padding]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn rfc4648_vectors() {
        // Test vectors from RFC 4648 section 10.
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(decode(enc).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn float_36() {
        // 36.0f32 = 0x42100000, little endian 00 00 10 42.
        assert_eq!(decode("AAAQQg==").unwrap(), vec![0, 0, 0x10, 0x42]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(decode("Zm9").is_err());
        assert!(decode("Zm9*").is_err());
        assert!(decode("Zg==Zg==").is_err());
        assert!(decode("Z=g=").is_err());
    }
}
