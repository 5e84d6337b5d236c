//! A device name's slug: how records, tuned environments, baselines and
//! recorded runs name a GPU in file and directory names.

/// A device name as a file or directory name: lowercase, every run of
/// characters other than ASCII letters and digits one `-`
/// (`NVIDIA H100 80GB HBM3` → `nvidia-h100-80gb-hbm3`).
pub fn slug(name: &str) -> String {
    let s: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  NVIDIA  H200 (x) "), "nvidia-h200-x");
        assert_eq!(slug("4.18.3.1 Global Memory"), "4-18-3-1-global-memory");
    }
}
