//! `source_file:`: a compile, runtime or host test's CUDA read from a `.cu`
//! file beside the spec (its path relative to the YAML file's directory)
//! instead of written inline under `source:`. Every error names the YAML
//! file, the test, the `source_file` field and its line.

use std::path::{Component, Path, PathBuf};

use super::{Cx, ItemErr};
use crate::limits::MAX_FILE_BYTES;
use crate::raw::RawTest;

impl Cx {
    /// Reads the file `source_file:` names into `t.source`, and returns its
    /// path (the YAML file's directory joined with it). `None`, with an
    /// error pushed, when the field is given with `source:`, is not a
    /// relative path to a `.cu` or `.cuh` file below the YAML file's
    /// directory, or cannot be read as UTF-8 text of at most
    /// [`MAX_FILE_BYTES`]; `None` without one when the field is absent.
    pub(super) fn source_file(&mut self, t: &mut RawTest, ie: &ItemErr) -> Option<PathBuf> {
        let rel = t.source_file.as_deref()?;
        let err = |msg: String| ie.at("source_file", None, msg);
        if t.source.is_some() {
            self.errors.push(err(
                "`source` and `source_file` both give the program: keep one".into(),
            ));
            return None;
        }
        let relative = Path::new(rel);
        let below = !rel.is_empty()
            && relative
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !below {
            self.errors.push(err(format!(
                "`{rel}` is not a path below the spec file's directory (relative, without `..`)"
            )));
            return None;
        }
        if !relative
            .extension()
            .is_some_and(|e| e == "cu" || e == "cuh")
        {
            self.errors
                .push(err(format!("`{rel}` is not a CUDA file (`.cu` or `.cuh`)")));
            return None;
        }
        let path = ie
            .file
            .parent()
            .map_or_else(|| relative.to_path_buf(), |d| d.join(relative));
        match read_cuda(&path) {
            Ok(text) => {
                t.source = Some(text);
                Some(path)
            }
            Err(why) => {
                self.errors
                    .push(err(format!("cannot read `{}`: {why}", path.display())));
                None
            }
        }
    }
}

/// A CUDA file's text, refused when over [`MAX_FILE_BYTES`] or not UTF-8.
fn read_cuda(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} KiB, the most a program's file may hold",
            MAX_FILE_BYTES >> 10
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        format!("not UTF-8 text (line {line})")
    })
}
