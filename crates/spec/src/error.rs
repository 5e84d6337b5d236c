//! Located spec errors: file, rule or test, field, line and column.

use std::fmt;
use std::path::PathBuf;

/// One problem in the spec. Loading collects every problem it can find
/// rather than stopping at the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub file: PathBuf,
    /// 1-based line and column, where known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// `rule <id>` or `test <name>`, where the problem is inside one.
    pub item: Option<String>,
    /// The YAML field at fault, e.g. `tests` or `kernels.parent.threads.t0[2]`.
    pub field: Option<String>,
    pub message: String,
}

impl SpecError {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: file.into(),
            line: None,
            column: None,
            item: None,
            field: None,
            message: message.into(),
        }
    }

    /// A side file's YAML that does not parse (`spec/sentences.yaml`,
    /// `spec/shapes.yaml`): the parser's message without its own position,
    /// located at that position.
    pub fn of_yaml(file: &std::path::Path, e: &serde_yaml::Error) -> SpecError {
        let full = e.to_string();
        let msg = full
            .rfind(" at line ")
            .map_or(full.as_str(), |i| &full[..i]);
        let err = SpecError::new(file, msg);
        match e.location() {
            Some(loc) => err.at(loc.line(), loc.column()),
            None => err,
        }
    }

    pub fn at(mut self, line: usize, column: usize) -> SpecError {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    pub fn item(mut self, item: impl Into<String>) -> SpecError {
        self.item = Some(item.into());
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> SpecError {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        f.write_str(": ")?;
        if let Some(i) = &self.item {
            write!(f, "{i}: ")?;
        }
        if let Some(fl) = &self.field {
            write!(f, "field `{fl}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpecError {}

/// Every error of a failed load, printed one per line.
#[derive(Debug, Clone)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}
