//! Trial names: built, parsed, round-tripped, refused with what is
//! expected, and keys covering their trials.

use super::*;

#[test]
fn names_round_trip() {
    for name in [
        "model/cdp2.a.b/t",
        "static/cdp1.x.y/c1-t",
        "gpu/sm_90/pdl.w.s/pdl-no-wait-may-be-stale",
        "sass/13.5/sm_90/pdl.w.s/pdl-no-wait-may-be-stale",
        "sass/13.0/sm_100/user/restrict-load",
        "sass/13.0/sm_90a/user/guarded-wait-gdc-on",
        "sass/13.5/compute_80/user/guarded-wait-arch",
        "lib/13.3/sm_90/merge_sort_keys/n100000-stress",
        "lib/13.0/compute_80/inclusive_scan/n1000-quiet",
    ] {
        let id: TrialId = name.parse().unwrap();
        assert_eq!(id.to_string(), name);
        assert_eq!(name.parse::<Subject>().unwrap(), Subject::Trial(id));
    }
    let id = TrialId::gpu("sm_90", "cdp2.a.b", "t");
    assert_eq!(id.to_string(), "gpu/sm_90/cdp2.a.b/t");
    assert_eq!(id.test_key().to_string(), "gpu/sm_90/t");
    assert_eq!(TrialId::model("r", "t").test_key().to_string(), "model/t");
    let k: TestKey = "gpu/sm_90/t".parse().unwrap();
    assert_eq!(k, id.test_key());
    let sass = TrialId::sass("13.5", "sm_90", "pdl.a", "t");
    assert_eq!(sass.to_string(), "sass/13.5/sm_90/pdl.a/t");
    assert_eq!(sass.test_key().to_string(), "sass/13.5/sm_90/t");
    assert_eq!(
        "sass/13.5/sm_90/t".parse::<TestKey>().unwrap(),
        sass.test_key()
    );
    assert_eq!("static/t".parse::<Subject>().unwrap().tier(), Tier::Static);
}

#[test]
fn a_library_trial_is_keyed_by_its_algorithm() {
    let id = TrialId::library("13.3", "sm_90", "merge_sort_keys", "n100000-stress");
    assert_eq!(
        id.to_string(),
        "lib/13.3/sm_90/merge_sort_keys/n100000-stress"
    );
    assert_eq!(id.tier, Tier::Library);
    assert_eq!(id.tier.as_str(), "library");
    assert_eq!("library".parse::<Tier>(), Ok(Tier::Library));
    assert!(
        "lib".parse::<Tier>().is_err(),
        "`lib` names trials, not the tier"
    );
    let key = id.test_key();
    assert_eq!(key.to_string(), "lib/13.3/sm_90/merge_sort_keys");
    assert_eq!(
        "lib/13.3/sm_90/merge_sort_keys".parse::<TestKey>().unwrap(),
        key
    );
    // Every case of the algorithm is covered by the key, no other.
    let k: Subject = "lib/13.3/sm_90/merge_sort_keys".parse().unwrap();
    assert!(k.covers(&id));
    assert!(k.covers(&TrialId::library(
        "13.3",
        "sm_90",
        "merge_sort_keys",
        "n1000-quiet"
    )));
    assert!(!k.covers(&TrialId::library(
        "13.3",
        "sm_90",
        "inclusive_scan",
        "n1000-quiet"
    )));
    assert!(!k.covers(&TrialId::library(
        "13.3",
        "compute_80",
        "merge_sort_keys",
        "n1000-quiet"
    )));
    let t: Subject = id.to_string().parse().unwrap();
    assert_eq!(t, Subject::Trial(id.clone()));
    // A library trial and a machine-code trial of the same parts differ.
    assert_ne!(
        id.to_string(),
        TrialId::sass("13.3", "sm_90", "merge_sort_keys", "n100000-stress").to_string()
    );
}

#[test]
fn bad_names_say_what_is_expected() {
    for (bad, says) in [
        ("gpu/cdp2.a.b/t", "gpu/sm_XX/"),
        ("cpu/a/b", "unknown tier `cpu`"),
        ("model/a", "expected model/<rule>/<test>"),
        ("gpu/sm_90/a/b/c", "expected gpu/<sm>/<rule>/<test>"),
        ("sass/sm_90/a/b", "sass/<toolchain>/sm_XX/"),
        (
            "sass/13.5/a/b",
            "architecture `sm_XX` (or, for PTX, `compute_XX`)",
        ),
        ("gpu/compute_80/a/b", "gpu/sm_XX/"),
        ("sass/13.5/compute_/a/b", "architecture `sm_XX`"),
        (
            "sass/13.5/sm_90/a",
            "expected sass/<toolchain>/<sm>/<rule>/<test>",
        ),
        ("model/a//b", "empty"),
        ("lib/sm_90/a/b", "lib/<release>/<target>/"),
        ("lib/13.3/a/b", "the target `sm_XX`"),
        (
            "lib/13.3/sm_90/a",
            "expected lib/<release>/<target>/<algorithm>/<case>",
        ),
        ("library/13.3/sm_90/a/b", "unknown tier `library`"),
        ("", "unknown tier"),
    ] {
        let e = bad.parse::<TrialId>().unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    let e = "gpu/sm_90/a/b/c".parse::<Subject>().unwrap_err();
    assert!(e.contains("neither a test"), "{e}");
}

#[test]
fn a_test_key_covers_every_rule_of_its_test() {
    let k: Subject = "gpu/sm_90/t".parse().unwrap();
    assert!(k.covers(&TrialId::gpu("sm_90", "a.b", "t")));
    assert!(k.covers(&TrialId::gpu("sm_90", "c.d", "t")));
    assert!(!k.covers(&TrialId::gpu("sm_80", "a.b", "t")));
    assert!(!k.covers(&TrialId::gpu("sm_90", "a.b", "u")));
    let t: Subject = "gpu/sm_90/a.b/t".parse().unwrap();
    assert!(t.covers(&TrialId::gpu("sm_90", "a.b", "t")));
    assert!(!t.covers(&TrialId::gpu("sm_90", "c.d", "t")));
}

#[test]
fn trials_sort_as_their_names() {
    let mut ids: Vec<TrialId> = ["gpu/sm_90/a.b-c/t", "gpu/sm_90/a.b/t", "model/a/t"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    ids.sort();
    let names: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let json = serde_json::to_string(&ids[0]).unwrap();
    assert_eq!(json, format!("\"{}\"", ids[0]));
    let back: TrialId = serde_json::from_str(&json).unwrap();
    assert_eq!(back, ids[0]);
    assert!(serde_json::from_str::<TrialId>("\"gpu/x\"").is_err());
}
