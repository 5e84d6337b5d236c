//! Opens the built site in headless Chromium (Debian's `chromium`), follows
//! the links from the index to a rule page with a litmus test and to the
//! discrepancies page, and checks what the rendered pages show. Screenshots
//! of the three pages go to `target/browser-test/`. The discrepancies page
//! is also laid out at 1280 px with a script that measures its boxes: the
//! status column of the facts table must lie inside the viewport and every
//! box that clips it, and the reproduce commands must wrap. The
//! toolchains page's tables (a column a toolchain) are measured the same
//! way: every cell inside the viewport, none overflowing itself.
//!
//! Without Chromium the test is reported *ignored* with the reason (a
//! libtest-mimic harness, so that the reason shows: `ignored, no Chromium
//! ...`, never a silent `ok`), unless `GRIDCHECK_REQUIRE_BROWSER` is set
//! (CI sets it): then it fails. `GRIDCHECK_CHROMIUM` names another browser
//! binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gridcheck_spec::TestBody;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GRIDCHECK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Runs the browser headless on one page with extra arguments; returns stdout.
fn browse(bin: &Path, scratch: &Path, args: &[String], url: &str) -> String {
    let profile = scratch.join(format!("profile-{}", args.len() + url.len()));
    let _ = std::fs::remove_dir_all(&profile);
    let out_file = scratch.join("stdout.txt");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "{} {args:?} {url}: {st}", bin.display());
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not finish in 120 s on {url}", bin.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&out_file).unwrap()
}

fn dump_dom(bin: &Path, scratch: &Path, url: &str) -> String {
    let dom = browse(bin, scratch, &["--dump-dom".into()], url);
    assert!(dom.contains("</html>"), "no DOM for {url}: {dom:.200}");
    dom
}

fn screenshot(bin: &Path, scratch: &Path, url: &str, png: &Path) {
    browse(
        bin,
        scratch,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,1600".into(),
        ],
        url,
    );
    let len = std::fs::metadata(png).map(|m| m.len()).unwrap_or(0);
    assert!(len > 10_000, "screenshot {} has {len} bytes", png.display());
}

/// The page's `<main>` element: the content, without the sidebar.
fn main_of(dom: &str) -> &str {
    let start = dom.find("<main").expect("a <main> element");
    let end = dom[start..].find("</main>").expect("</main>") + start;
    &dom[start..end]
}

/// Every `href` in an HTML fragment, in order.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(|s| s.replace("&amp;", "&"))
        .collect()
}

/// The text of an HTML fragment: tags dropped (block tags as a space),
/// entities decoded, whitespace folded.
fn text(html: &str) -> String {
    const INLINE: [&str; 8] = ["strong", "em", "code", "a", "span", "small", "b", "i"];
    let mut out = String::new();
    let mut tag: Option<String> = None;
    for c in html.chars() {
        match (&mut tag, c) {
            (None, '<') => tag = Some(String::new()),
            (Some(t), '>') => {
                let name: String = t
                    .trim_start_matches('/')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if !INLINE.contains(&name.as_str()) {
                    out.push(' ');
                }
                tag = None;
            }
            (Some(t), c) => t.push(c),
            (None, c) => out.push(c),
        }
    }
    let out = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    fold(&out)
}

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let trial =
        Trial::ignorable_test(
            "index_links_to_a_rule_page_and_the_discrepancies",
            || match chromium() {
                Some(bin) => {
                    index_links_to_a_rule_page_and_the_discrepancies(&bin);
                    Ok(Completion::Completed)
                }
                None => not_run(std::env::var_os("GRIDCHECK_REQUIRE_BROWSER").is_some()),
            },
        );
    // The check of the not-run path itself, which runs everywhere.
    let not_run_check = Trial::ignorable_test(
        "without_a_browser_the_test_is_ignored_or_fails_never_passes",
        || {
            if !matches!(not_run(false), Ok(Completion::Ignored { reason: Some(_) })) {
                return Err(
                    "without Chromium the browser test is not ignored with a reason".into(),
                );
            }
            if not_run(true).is_ok() {
                return Err("GRIDCHECK_REQUIRE_BROWSER does not fail the browser test".into());
            }
            Ok(Completion::Completed)
        },
    );
    libtest_mimic::run(&args, vec![trial, not_run_check]).exit_code()
}

/// Without a browser: ignored with the reason, or a failure when CI
/// requires the browser.
fn not_run(required: bool) -> Result<Completion, Failed> {
    if required {
        Err(
            "GRIDCHECK_REQUIRE_BROWSER is set but no Chromium was found \
             (apt-get install chromium, or set GRIDCHECK_CHROMIUM)"
                .into(),
        )
    } else {
        Ok(Completion::ignored_with(
            "NOT RUN: no Chromium at /usr/bin/chromium \
             (apt-get install chromium; CI sets GRIDCHECK_REQUIRE_BROWSER=1)",
        ))
    }
}

/// The script the layout check adds to a copy of a page: it measures, at
/// the window's width, every cell of the facts table's status column (and
/// each status badge in it) against the viewport and every ancestor that
/// clips it, and each reproduce command's box against its own width (it
/// must wrap, not scroll), then writes one line a problem, after a
/// `cells=<n>` line, into `<pre id="gc-layout">`.
const LAYOUT_SCRIPT: &str = r#"<script>
(function () {
  var out = [];
  var vw = document.documentElement.clientWidth;
  function visibleRight(el) {
    var right = vw;
    for (var p = el.parentElement; p; p = p.parentElement) {
      var st = getComputedStyle(p);
      if (st.overflowX !== 'visible') right = Math.min(right, p.getBoundingClientRect().right);
    }
    return right;
  }
  var cells = document.querySelectorAll('table.gc-facts tr > :last-child');
  cells.forEach(function (c, i) {
    var r = c.getBoundingClientRect();
    var right = visibleRight(c);
    if (r.width < 1 || r.right > right + 1) {
      out.push('status cell ' + i + ' (' + c.textContent.trim().slice(0, 40) + '): right edge ' +
               Math.round(r.right) + ' px beyond ' + Math.round(right) + ' px');
    }
    if (c.scrollWidth > c.clientWidth + 1) {
      out.push('status cell ' + i + ' overflows itself: ' + c.scrollWidth + ' > ' + c.clientWidth + ' px');
    }
    c.querySelectorAll('.gc-status').forEach(function (b) {
      var br = b.getBoundingClientRect();
      if (br.right > Math.min(r.right, right) + 1) {
        out.push('status badge ' + b.textContent + ' in cell ' + i + ' clipped at ' + Math.round(br.right) + ' px');
      }
    });
  });
  document.querySelectorAll('.gc-repro pre, .gc-repro pre > code').forEach(function (p, i) {
    if (p.scrollWidth > p.clientWidth + 1 || p.getBoundingClientRect().right > visibleRight(p) + 1) {
      out.push('reproduce command ' + i + ' does not wrap: ' + p.scrollWidth + ' > ' + p.clientWidth + ' px');
    }
  });
  var el = document.createElement('pre');
  el.id = 'gc-layout';
  el.textContent = 'cells=' + cells.length + '\n' + out.join('\n');
  document.body.appendChild(el);
})();
</script>"#;

/// The cells [`LAYOUT_SCRIPT`] measures on the discrepancies page.
const FACTS_STATUS_CELLS: &str = "table.gc-facts tr > :last-child";

/// Lays out a copy of `page` (a file of `book`), with `extra_css` added,
/// in a 1280 px wide window and measures it with [`LAYOUT_SCRIPT`], on the
/// cells `cells` selects: their number and the problems found.
fn layout_at_1280(
    bin: &Path,
    scratch: &Path,
    book: &Path,
    (page, cells): (&str, &str),
    extra_css: &str,
) -> (usize, Vec<String>) {
    let script = LAYOUT_SCRIPT.replace(FACTS_STATUS_CELLS, cells);
    let html = std::fs::read_to_string(book.join(page)).unwrap();
    let copy = format!("layout-{}", page.replace('/', "-"));
    let body_end = html.rfind("</body>").expect("a </body>");
    let measured = format!(
        "{}<style>{extra_css}</style>{script}{}",
        &html[..body_end],
        &html[body_end..]
    );
    // Beside the page, so that its relative links (the CSS) resolve.
    let path = book.join(Path::new(page).with_file_name(&copy));
    std::fs::write(&path, measured).unwrap();
    let dom = browse(
        bin,
        scratch,
        &["--dump-dom".into(), "--window-size=1280,1600".into()],
        &format!("file://{}", path.display()),
    );
    let start = dom
        .find("<pre id=\"gc-layout\">")
        .unwrap_or_else(|| panic!("the layout script did not run on {page}: {dom:.300}"))
        + "<pre id=\"gc-layout\">".len();
    let report = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let report = report
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&");
    let mut lines = report.lines();
    let cells = lines
        .next()
        .and_then(|l| l.strip_prefix("cells="))
        .and_then(|n| n.parse().ok())
        .expect("cells=<n>");
    (cells, lines.map(str::to_string).collect())
}

fn index_links_to_a_rule_page_and_the_discrepancies(bin: &Path) {
    let (inputs, out, _) = common::built("browser");
    let book = out.join("book");
    let scratch = out.join("chromium");
    std::fs::create_dir_all(&scratch).unwrap();
    let shots = common::root().join("target/browser-test");
    std::fs::create_dir_all(&shots).unwrap();
    let url = |rel: &str| format!("file://{}", book.join(rel).display());

    // The index: its content links to every rule and to the discrepancies.
    let index_dom = dump_dom(bin, &scratch, &url("index.html"));
    let index = main_of(&index_dom);
    assert!(
        text(index).contains("What CUDA Dynamic Parallelism and PDL guarantee"),
        "index title"
    );
    let links = hrefs(index);
    let rule_links: Vec<&String> = links.iter().filter(|h| h.starts_with("rules/")).collect();
    assert_eq!(
        rule_links.len(),
        inputs.spec.rules.len(),
        "the index links every rule once"
    );
    let disc_link = links
        .iter()
        .find(|h| h.starts_with("discrepancies.html"))
        .expect("the index links to the discrepancies page");
    screenshot(bin, &scratch, &url("index.html"), &shots.join("index.png"));

    // The first rule in index order with a litmus test, and one with a GPU result.
    let latest = gridcheck_docs::results::latest(&inputs.runs);
    let (link, rule, test) = rule_links
        .iter()
        .find_map(|h| {
            let id = h.trim_start_matches("rules/").trim_end_matches(".html");
            let rule = inputs.spec.rule(id)?;
            let test = rule.tests.iter().find_map(|t| {
                let t = inputs.spec.test(t)?;
                let ran = latest.iter().any(|run| {
                    run.records.iter().any(|r| {
                        r.trial.rule == rule.id && r.trial.test == t.name && r.hardware.is_some()
                    })
                });
                (matches!(t.body, TestBody::Litmus(_)) && ran).then_some(t)
            })?;
            Some((h, rule, test))
        })
        .expect("a rule with a litmus test that ran on a GPU");
    let rule_dom = dump_dom(bin, &scratch, &url(link));
    let page = main_of(&rule_dom);
    let shown = text(page);
    assert!(shown.contains(&rule.id), "the rule page names {}", rule.id);
    assert!(
        shown.contains(&fold(&rule.quote.replace('`', ""))),
        "the rule page shows the quote of {}:\n{}\n--- page text:\n{shown:.2000}",
        rule.id,
        rule.quote
    );
    assert!(shown.contains(&rule.source.section), "the seed section");
    assert!(shown.contains(&test.name), "the test {}", test.name);
    let model = latest
        .iter()
        .flat_map(|run| &run.records)
        .find(|r| r.trial.rule == rule.id && r.trial.test == test.name && r.model.is_some())
        .and_then(|r| r.model.as_ref())
        .expect("a model result");
    assert!(
        shown.contains(&format!("Model: verdict {}", model.verdict)),
        "the model's verdict ({}) is shown",
        model.verdict
    );
    assert!(
        shown.contains(&format!("{} reachable final state", model.states.len())),
        "the number of reachable states"
    );
    let svg = page
        .find("<svg")
        .map(|i| &page[i..])
        .expect("a histogram plot");
    assert!(svg.contains("gc-bar"), "the plot has bars");
    assert!(svg.contains(&test.name), "the plot is titled with the test");
    screenshot(bin, &scratch, &url(link), &shots.join("rule.png"));

    // The discrepancies page: every known discrepancy with its evidence and
    // the command that reproduces it.
    let disc_dom = dump_dom(bin, &scratch, &url(disc_link));
    let disc = text(main_of(&disc_dom));
    assert!(disc.contains("Discrepancies between the guide and the hardware"));
    assert!(
        !inputs.facts.is_empty(),
        "the checkout lists known discrepancies"
    );
    let latest = gridcheck_docs::results::latest(&inputs.runs);
    let mut shown_with_trials = 0;
    for x in &inputs.facts {
        let subject = x.subject.to_string();
        assert!(disc.contains(&subject), "{subject} listed");
        assert!(disc.contains(&fold(&x.summary)), "the summary of {subject}");
        for para in x.evidence.split("\n\n") {
            assert!(disc.contains(&fold(para)), "the evidence for {subject}");
        }
        let covered: Vec<&gridcheck_report::TrialRecord> = latest
            .iter()
            .flat_map(|run| &run.records)
            .filter(|r| {
                x.covers(&r.trial)
                    && !matches!(
                        r.status,
                        gridcheck_report::Status::NotSupported | gridcheck_report::Status::NotRun
                    )
            })
            .collect();
        // An entry about trials the newest run could not run (a test of two
        // GPUs after a run on one) says so, as the page promises.
        let Some(first) = covered.first() else {
            let at = disc.find(&subject).expect("listed");
            assert!(
                disc[at..].contains("Observed: not in the latest results"),
                "{subject}: says it is not in the latest results"
            );
            continue;
        };
        shown_with_trials += 1;
        // A fact over many trials (a library algorithm's cases) shows one
        // of them; the command must reproduce a trial it covers.
        let _ = first;
        assert!(
            covered.iter().any(|t| disc.contains(&format!(
                "cargo xtask conformance --tier {} -- --exact {}",
                t.trial.tier, t.trial
            ))),
            "the command reproducing {subject}"
        );
        for r in &covered {
            if let Some(rule) = inputs.spec.rule(&r.trial.rule) {
                assert!(
                    disc.contains(&fold(&rule.quote.replace('`', ""))),
                    "the quote of {}",
                    rule.id
                );
            }
        }
    }
    assert!(
        shown_with_trials > 0,
        "no known discrepancy has a trial in the latest results"
    );
    screenshot(
        bin,
        &scratch,
        &url(disc_link),
        &shots.join("discrepancies.png"),
    );
    let page = disc_link.split('#').next().unwrap();
    discrepancies_fit_at_1280(bin, &scratch, &book, page, inputs.facts.len());
    toolchains_fit_at_1280(bin, &scratch, &book);
    eprintln!("screenshots in {}", shots.display());
    let _ = std::fs::remove_dir_all(&out);
}

/// At 1280 px the discrepancies page's status column is whole and its
/// commands wrap: every fact's row (of at least `known`, and the header)
/// has its status cell inside the page; and the check finds both problems
/// on a copy whose CSS makes them.
fn discrepancies_fit_at_1280(bin: &Path, scratch: &Path, book: &Path, page: &str, known: usize) {
    // At 1280 px the status column is whole and the commands wrap: every
    // fact's row (and the header) has its status cell inside the page.
    let (cells, problems) = layout_at_1280(bin, scratch, book, (page, FACTS_STATUS_CELLS), "");
    assert!(
        cells > known,
        "{cells} status cells: one a fact ({} known), and the header's",
        known
    );
    assert!(
        problems.is_empty(),
        "the discrepancies page at 1280 px:\n  {}",
        problems.join("\n  ")
    );
    // The check fails on a page whose status column is pushed out of the
    // window, and on commands that do not wrap.
    let (_, problems) = layout_at_1280(
        bin,
        scratch,
        book,
        (page, FACTS_STATUS_CELLS),
        ".gc-facts { table-layout: auto; } .gc-facts td.gc-st { white-space: nowrap; min-width: 1400px; } \
         .gc-repro pre, .gc-repro code { white-space: pre; }",
    );
    assert!(
        problems.iter().any(|p| p.starts_with("status cell")),
        "a clipped status column is not found: {problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("reproduce command")),
        "a command that does not wrap is not found: {problems:?}"
    );
}

/// At 1280 px every cell of the toolchains page's tables lies inside the
/// page and none overflows itself; and the check finds cells pushed out.
fn toolchains_fit_at_1280(bin: &Path, scratch: &Path, book: &Path) {
    const CELLS: &str = "table.gc-matrix td, table.gc-matrix th";
    let page = ("toolchains.html", CELLS);
    let (cells, problems) = layout_at_1280(bin, scratch, book, page, "");
    assert!(cells > 0, "the toolchains page has no table cell");
    assert!(
        problems.is_empty(),
        "the toolchains page at 1280 px:\n  {}",
        problems.join("\n  ")
    );
    let (_, problems) = layout_at_1280(
        bin,
        scratch,
        book,
        page,
        ".gc-matrix { table-layout: auto; width: auto; } \
         .gc-matrix td, .gc-matrix th { white-space: nowrap; min-width: 1400px; }",
    );
    assert!(
        problems.iter().any(|p| p.starts_with("status cell")),
        "cells pushed out of the window are not found: {problems:?}"
    );
}
