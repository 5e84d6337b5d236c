//! The index's shape: rules grouped by seed document, then by the seed's
//! section, in the seed's order.
//!
//! Sections are ordered by their number (`4.18.3.1` before `4.18.10`); sections
//! without a number (the 2012 guide, the textbook chapter) by where their title
//! first occurs in the seed when the seeds are at hand, else by where the spec
//! first cites them. Rules keep spec order within a section.

use std::collections::BTreeMap;
use std::path::Path;

use gridcheck_spec::{Rule, Source, SourceKind, Spec, seeds::normalize};

/// What each seed document is, for readers who do not have the files.
const KNOWN_SEEDS: &[(&str, &str, &str)] = &[
    (
        "000_522be91053af7f8d.txt",
        "CUDA Programming Guide (CUDA 13), 4.18 CUDA Dynamic Parallelism",
        "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/dynamic-parallelism.html",
    ),
    (
        "001_6a6bb1cdd39dff41.txt",
        "CUDA Dynamic Parallelism Programming Guide (August 2012, legacy CDP1)",
        "",
    ),
    (
        "002_79677245dbba37b3.txt",
        "Using Programmatic Dependent Launch (PDL) to Reduce End-to-End Latency (blog post)",
        "",
    ),
    (
        "003_4dd602fa7046c730.txt",
        "Programming Massively Parallel Processors, Chapter 21: CUDA dynamic parallelism",
        "",
    ),
    (
        "004_4dd208244d7b3c90.txt",
        "CUDA Programming Guide (CUDA 13), 4.5 Programmatic Dependent Launch and Synchronization",
        "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/programmatic-dependent-launch.html",
    ),
];

/// A seed's readable title and its address when known.
pub fn seed_title(file: &str) -> (String, Option<String>) {
    match KNOWN_SEEDS.iter().find(|(f, _, _)| *f == file) {
        Some((_, t, u)) => (t.to_string(), Some(u.to_string()).filter(|u| !u.is_empty())),
        None => (file.to_string(), None),
    }
}

/// A source's readable title and address: a seed's from the table above,
/// another document's from its header in `<root>/spec/documents/`.
pub fn source_title(root: &Path, kind: SourceKind, file: &str) -> (String, Option<String>) {
    match kind {
        SourceKind::Seed => seed_title(file),
        SourceKind::Document => {
            let h = gridcheck_spec::documents::read_header(&root.join("spec"), file)
                .unwrap_or_default();
            (h.title.unwrap_or_else(|| file.to_string()), h.url)
        }
    }
}

/// Where a source's text is for section order: the seeds' folder, or the
/// spec's documents.
fn source_text(root: &Path, seeds_dir: Option<&Path>, source: &Source) -> Option<String> {
    let path = match source.kind {
        SourceKind::Seed => seeds_dir?.join(&source.file),
        SourceKind::Document => root
            .join("spec")
            .join(gridcheck_spec::documents::DIR)
            .join(&source.file),
    };
    let bytes = std::fs::read(path).ok()?;
    Some(normalize(&String::from_utf8_lossy(&bytes)).to_lowercase())
}

/// One section of a seed with the rules that quote it.
#[derive(Debug)]
pub struct Section<'a> {
    pub title: String,
    pub rules: Vec<&'a Rule>,
}

/// One source document (a seed, or another document) with its sections in
/// order.
#[derive(Debug)]
pub struct SeedGroup<'a> {
    pub kind: SourceKind,
    /// The file: a seed's name, or a file of `spec/documents/`.
    pub seed: String,
    pub title: String,
    pub url: Option<String>,
    pub sections: Vec<Section<'a>>,
}

/// The numbers a section title starts with: `4.18.3.1 Global Memory` →
/// [4, 18, 3, 1]; none for an unnumbered title.
pub fn section_number(title: &str) -> Vec<u32> {
    let head = title.split_whitespace().next().unwrap_or("");
    let parts: Vec<&str> = head.trim_end_matches('.').split('.').collect();
    if parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        parts.iter().filter_map(|p| p.parse().ok()).collect()
    } else {
        Vec::new()
    }
}

/// Groups the spec's rules by seed and section (see the module docs).
/// `seeds_dir` holds the seed files, when available.
/// The seeds come first, then the other documents, each by file name.
pub fn group<'a>(spec: &'a Spec, root: &Path, seeds_dir: Option<&Path>) -> Vec<SeedGroup<'a>> {
    let mut seeds: BTreeMap<(bool, &str), (&Source, Vec<Section<'a>>)> = BTreeMap::new();
    for r in &spec.rules {
        let key = (
            r.source.kind == SourceKind::Document,
            r.source.file.as_str(),
        );
        let (_, sections) = seeds.entry(key).or_insert_with(|| (&r.source, Vec::new()));
        match sections.iter_mut().find(|s| s.title == r.source.section) {
            Some(s) => s.rules.push(r),
            None => sections.push(Section {
                title: r.source.section.clone(),
                rules: vec![r],
            }),
        }
    }
    seeds
        .into_iter()
        .map(|(_, (source, mut sections))| {
            let text = source_text(root, seeds_dir, source);
            // First-citation order is the fallback: a stable sort keeps it.
            sections.sort_by_cached_key(|s| {
                let number = section_number(&s.title);
                let offset = text.as_deref().and_then(|t| {
                    let title = if number.is_empty() {
                        s.title.as_str()
                    } else {
                        s.title.split_once(' ').map_or("", |(_, t)| t)
                    };
                    t.find(&normalize(title).to_lowercase())
                });
                (number, offset.unwrap_or(usize::MAX))
            });
            let (title, url) = source_title(root, source.kind, &source.file);
            SeedGroup {
                kind: source.kind,
                seed: source.file.clone(),
                title,
                url,
                sections,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(section_number("4.18.3.1 Global Memory"), vec![4, 18, 3, 1]);
        assert_eq!(section_number("4.5.2. API Description"), vec![4, 5, 2]);
        assert_eq!(section_number("1. What is PDL?"), vec![1]);
        assert!(section_number("Global Memory").is_empty());
        assert!(section_number("").is_empty());
        assert!(section_number("4.x Foo").is_empty());
    }

    #[test]
    fn groups_in_seed_order() {
        let rule = |id: &str, seed: &str, sec: &str| {
            format!(
                "  - id: {id}\n    source: {{ seed: {seed}, section: \"{sec}\" }}\n    quote: q\n    profile: cdp2\n    status: untestable\n    reason: r\n"
            )
        };
        let yaml = format!(
            "rules:\n{}{}{}{}",
            rule("cdp2.a.a", "s1.txt", "4.10 Later"),
            rule("cdp2.a.b", "s1.txt", "4.9 Earlier"),
            rule("cdp2.a.c", "s2.txt", "Beta"),
            rule("cdp2.a.d", "s2.txt", "Alpha"),
        );
        let spec = gridcheck_spec::load_sources(&[("a.yaml".into(), yaml)], None).unwrap();
        let dir = std::env::temp_dir().join(format!("gc-sections-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s2.txt"), "intro\n# Alpha\ntext\n# Beta\n").unwrap();
        let titles = |g: &[SeedGroup]| -> Vec<Vec<String>> {
            g.iter()
                .map(|s| s.sections.iter().map(|x| x.title.clone()).collect())
                .collect()
        };
        let root = std::path::Path::new("/nonexistent");
        let with = group(&spec, root, Some(&dir));
        assert_eq!(
            titles(&with),
            [vec!["4.9 Earlier", "4.10 Later"], vec!["Alpha", "Beta"]]
        );
        // Without the seeds, unnumbered sections keep the spec's order.
        let without = group(&spec, root, None);
        assert_eq!(titles(&without)[1], ["Beta", "Alpha"]);
        assert_eq!(with[0].sections[1].rules[0].id, "cdp2.a.a");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn documents_follow_the_seeds_with_their_header() {
        let root = std::env::temp_dir().join(format!("gc-documents-{}", std::process::id()));
        let docs = root.join("spec/documents");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(
            docs.join("a-doc.txt"),
            "Title: A Document\nURL Source: https://example.org/a\n\n# Two\n# One\n",
        )
        .unwrap();
        let yaml = "rules:\n  - id: cdp2.a.a\n    source: { document: a-doc.txt, section: One }\n    quote: q\n    profile: cdp2\n    status: untestable\n    reason: r\n  - id: cdp2.a.b\n    source: { document: a-doc.txt, section: Two }\n    quote: q\n    profile: cdp2\n    status: untestable\n    reason: r\n  - id: cdp2.a.c\n    source: { seed: z.txt, section: Z }\n    quote: q\n    profile: cdp2\n    status: untestable\n    reason: r\n";
        let spec = gridcheck_spec::load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap();
        let g = group(&spec, &root, None);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].kind, g[0].seed.as_str()), (SourceKind::Seed, "z.txt"));
        assert_eq!(g[1].kind, SourceKind::Document);
        assert_eq!(g[1].title, "A Document");
        assert_eq!(g[1].url.as_deref(), Some("https://example.org/a"));
        // Ordered by where each title occurs in the document's passages.
        let titles: Vec<&str> = g[1].sections.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, ["Two", "One"]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
