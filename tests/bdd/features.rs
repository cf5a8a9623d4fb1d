//! The feature files of one run, read by cucumber's own parser: each `@pure` feature's name
//! carries the host's label (so the report tells the two runs apart), and the worker's runs read
//! only `@pure` features (the `@engine` ones start their own worker).

use std::path::Path;

use cucumber::gherkin::Feature;
use cucumber::parser::{self, Parser};
use futures::stream::{BoxStream, StreamExt as _};

use crate::host::HostKind;

/// [`parser::Basic`], labelled for `host`.
#[derive(Debug, Clone, Copy)]
pub struct Labelled(pub HostKind);

fn is_pure(feature: &Feature) -> bool {
    feature.tags.iter().any(|t| t == "pure")
}

impl<I: AsRef<Path>> Parser<I> for Labelled {
    type Cli = <parser::Basic as Parser<I>>::Cli;
    type Output = BoxStream<'static, parser::Result<Feature>>;

    fn parse(self, input: I, cli: Self::Cli) -> Self::Output {
        let host = self.0;
        parser::Basic::new()
            .parse(input, cli)
            .filter_map(move |parsed| async move {
                match parsed {
                    Ok(mut feature) if is_pure(&feature) => {
                        feature.name = format!("{} ({})", feature.name, host.label());
                        Some(Ok(feature))
                    }
                    Ok(_) if host.is_worker() => None,
                    other => Some(other),
                }
            })
            .boxed()
    }
}
