//! Reading a `model.safetensors` file: its tensors as f32, whatever their stored type (f32,
//! f16, bf16, int8, int32/int64 for index tensors). A file that is not one is refused with a
//! hint, never half-read.

use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, Result};

/// The largest `model.safetensors` read (the built-in models take under 1 GB; the largest
/// BERT-family embedding models about 2.3 GB): a bigger file is refused before it is read, not
/// allowed to exhaust memory.
pub(crate) const MAX_WEIGHTS: u64 = 6_000_000_000;

/// A safetensors file read into memory.
pub(crate) struct Weights {
    path: PathBuf,
    bytes: Vec<u8>,
}

/// One tensor's shape, type and bytes, borrowed from [`Weights`].
pub(crate) struct Tensor<'a> {
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: Dtype,
    pub(crate) data: &'a [u8],
}

impl Weights {
    pub(crate) fn read(path: &Path) -> Result<Weights> {
        let size = std::fs::metadata(path)
            .map_err(|e| Error::io("read", path, e))?
            .len();
        if size > MAX_WEIGHTS {
            return Err(Error::usage(format!(
                "{} holds {:.1} GB, more than the {:.0} GB a local model may take",
                path.display(),
                size as f64 / 1e9,
                MAX_WEIGHTS as f64 / 1e9
            ))
            .hint("local embedding models are small (the built-in ones under 1 GB): is it the right file?"));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
        let w = Weights {
            path: path.to_owned(),
            bytes,
        };
        // Checked once here, so later lookups only fail for a missing tensor.
        SafeTensors::deserialize(&w.bytes).map_err(|e| w.damaged(&e.to_string()))?;
        Ok(w)
    }

    fn parsed(&self) -> SafeTensors<'_> {
        SafeTensors::deserialize(&self.bytes).expect("checked when read")
    }

    /// The tensor `name`, if the file has it.
    pub(crate) fn get(&self, name: &str) -> Option<Tensor<'_>> {
        let st = self.parsed();
        let view = st.tensor(name).ok()?;
        // The view borrows `st`; its bytes borrow `self.bytes`, so they outlive it.
        let data: &[u8] = view.data();
        let start = data.as_ptr() as usize - self.bytes.as_ptr() as usize;
        Some(Tensor {
            shape: view.shape().to_vec(),
            dtype: view.dtype(),
            data: &self.bytes[start..start + data.len()],
        })
    }

    /// The tensor `name` as f32 values, with its shape.
    pub(crate) fn f32(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>)> {
        let t = self.get(name).ok_or_else(|| {
            self.damaged(&format!("it has no tensor {name}"))
                .hint("is it a model of another family? a local model needs config.json, tokenizer.json and model.safetensors of a model2vec or BERT-family model")
        })?;
        let values = t.to_f32().ok_or_else(|| {
            self.damaged(&format!(
                "tensor {name} is of type {:?}, which ai cannot read",
                t.dtype
            ))
        })?;
        if !values.iter().all(|v| v.is_finite()) {
            return Err(self.not_finite(name));
        }
        Ok((t.shape, values))
    }

    /// The error for a tensor holding NaN or infinite values (its vectors would be NaN).
    pub(crate) fn not_finite(&self, name: &str) -> Error {
        self.damaged(&format!("tensor {name} holds NaN or infinite values"))
    }

    pub(crate) fn damaged(&self, why: &str) -> Error {
        Error::usage(format!(
            "{} is not a usable safetensors file: {why}",
            self.path.display()
        ))
        .hint("it may be damaged or a partial download: download it again (ai kb model pull NAME), or replace the file")
    }
}

impl Tensor<'_> {
    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Element `i` as f32 (`None` past the end or for a type ai cannot read).
    pub(crate) fn at(&self, i: usize) -> Option<f32> {
        let d = self.data;
        Some(match self.dtype {
            Dtype::F32 => f32::from_le_bytes(d.get(i * 4..i * 4 + 4)?.try_into().ok()?),
            Dtype::F16 => f16_to_f32(u16::from_le_bytes(
                d.get(i * 2..i * 2 + 2)?.try_into().ok()?,
            )),
            Dtype::BF16 => f32::from_bits(
                u32::from(u16::from_le_bytes(
                    d.get(i * 2..i * 2 + 2)?.try_into().ok()?,
                )) << 16,
            ),
            Dtype::I8 => f32::from(*d.get(i)? as i8),
            Dtype::U8 => f32::from(*d.get(i)?),
            Dtype::I32 => i32::from_le_bytes(d.get(i * 4..i * 4 + 4)?.try_into().ok()?) as f32,
            Dtype::I64 => i64::from_le_bytes(d.get(i * 8..i * 8 + 8)?.try_into().ok()?) as f32,
            _ => return None,
        })
    }

    /// Element `i` of an index tensor (int32/int64).
    pub(crate) fn index(&self, i: usize) -> Option<usize> {
        let d = self.data;
        match self.dtype {
            Dtype::I32 => usize::try_from(i32::from_le_bytes(
                d.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
            .ok(),
            Dtype::I64 => usize::try_from(i64::from_le_bytes(
                d.get(i * 8..i * 8 + 8)?.try_into().ok()?,
            ))
            .ok(),
            _ => None,
        }
    }

    /// Row `r` of a 2-D tensor added, times `w`, into `out` (its length is the row's).
    pub(crate) fn add_row(&self, r: usize, w: f32, out: &mut [f32]) {
        let n = out.len();
        let base = r * n;
        match self.dtype {
            Dtype::F32 => {
                let bytes = &self.data[base * 4..(base + n) * 4];
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o += w * f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
            Dtype::F16 => {
                let bytes = &self.data[base * 2..(base + n) * 2];
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o += w * f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
                }
            }
            _ => {
                for (k, o) in out.iter_mut().enumerate() {
                    *o += w * self.at(base + k).unwrap_or(0.0);
                }
            }
        }
    }

    fn to_f32(&self) -> Option<Vec<f32>> {
        if !self.readable() {
            return None;
        }
        // The common types without a per-element match (a model holds millions).
        Some(match self.dtype {
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => self
                .data
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            _ => (0..self.len()).map(|i| self.at(i)).collect::<Option<_>>()?,
        })
    }

    /// Whether every element is a finite number (int types always are).
    pub(crate) fn finite(&self) -> bool {
        match self.dtype {
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .all(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_finite()),
            // Exponent all ones: infinity or NaN.
            Dtype::F16 => self
                .data
                .chunks_exact(2)
                .all(|b| u16::from_le_bytes([b[0], b[1]]) & 0x7c00 != 0x7c00),
            Dtype::BF16 => self
                .data
                .chunks_exact(2)
                .all(|b| u16::from_le_bytes([b[0], b[1]]) & 0x7f80 != 0x7f80),
            _ => true,
        }
    }

    /// Whether the bytes hold `len()` elements of a type ai can read.
    pub(crate) fn readable(&self) -> bool {
        let size = match self.dtype {
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::F16 | Dtype::BF16 => 2,
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I64 => 8,
            _ => return false,
        };
        self.data.len() == self.len() * size
    }
}

/// IEEE half precision → f32 (subnormals, infinities and NaN included).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000,
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::f16_to_f32;

    #[test]
    fn half_precision_converts_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000), -0.0);
    }
}
