//! Example client "a replica that never misses": follows one session through `session::changed`,
//! rebuilds it in a [`session_core::replica::Replica`] and prints one line per applied change.
//!
//! ```text
//! cargo run -p session-manager --example replica -- --session s_123 [--url ws://127.0.0.1:49134]
//! ```
//!
//! How it never misses a change although deliveries are fire-and-forget (a worker killed between
//! a write and its delivery, an engine that drops a message, a binding that is not there yet):
//!
//! * it binds first, then catches up from `session::changes` (after seq 0), so every change is
//!   either delivered or in the catch-up pages — usually both: a seq at or below the replica's
//!   `applied_seq` is a duplicate and is dropped;
//! * a delivery past `applied_seq + 1` is a gap: it reads `session::changes` after `applied_seq`
//!   (page by page) and then applies the delivery (by then a duplicate);
//! * after `--poll-ms` without a delivery it reads `session::changes` once more, which finds the
//!   tail a lost last delivery would leave behind;
//! * `truncated` (the changes after `applied_seq` are no longer kept) and a fork's
//!   `session::created` (its copied history is event-silent) take a snapshot read instead:
//!   `session::store::get-meta` + `session::store::list-entries` (every branch, not only the
//!   active path `session::messages` serves), which an fs-mode session-manager serves.
//!
//! Output, one line per applied change: `<seq> <type>`, then for message changes the entry id and
//! the message's reassembled text (`text=` every text block joined, as a JSON string; `thinking=`
//! when it has thinking). Notes (catch-up, gaps, snapshots, errors) go to stderr.

use std::time::Duration;

use clap::Parser;
use iii_sdk::protocol::{RegisterTriggerInput, TriggerRequest};
use iii_sdk::runtime::WorkerMetadata;
use iii_sdk::{
    register_worker, Error, IIIClient, InitOptions, RegisterFunction, WorkerIdentityMode,
};
use serde_json::{json, Value};
use session_core::feed::{CHANGED, MESSAGE_DELTA};
use session_core::replica::{Replica, Step};
use session_core::wire::api_store::ListEntriesResponse;
use session_core::wire::{
    AgentMessage, Change, ChangedEvent, ChangesResponse, ContentBlock, SessionEntry, SessionMeta,
};
use tokio::sync::mpsc;

#[derive(Debug, Parser)]
#[command(about = "Follow one session through session::changed and print every change once")]
struct Args {
    /// The engine's WebSocket URL.
    #[arg(long, default_value = "ws://127.0.0.1:49134")]
    url: String,
    /// The session to follow.
    #[arg(long)]
    session: String,
    /// Quiet time (ms) after which the replica reads `session::changes` on its own.
    #[arg(long, default_value_t = 2000)]
    poll_ms: u64,
    /// Page size of the catch-up reads.
    #[arg(long, default_value_t = 100)]
    page: usize,
    /// Exit once this seq is applied (default: run until killed).
    #[arg(long)]
    exit_at_seq: Option<u64>,
    /// Bind with `coalesce_ms`: streaming deltas arrive merged, at most this often.
    #[arg(long)]
    coalesce_ms: Option<u64>,
}

/// Timeout of one call; reads are retried (an engine call can go unanswered).
const CALL_TIMEOUT_MS: u64 = 5000;

/// The replica and how it is kept.
struct Follower {
    iii: IIIClient,
    session: String,
    page: usize,
    replica: Replica,
}

impl Follower {
    async fn call(&self, function_id: &str, payload: Value) -> Result<Value, Error> {
        let mut last = Err(Error::Timeout);
        for _ in 0..3 {
            let request = TriggerRequest {
                function_id: function_id.into(),
                payload: payload.clone(),
                action: None,
                timeout_ms: Some(CALL_TIMEOUT_MS),
            };
            last = self.iii.trigger(request).await;
            if !matches!(last, Err(Error::Timeout)) {
                break;
            }
        }
        last
    }

    /// Offers one delivery covering `first_seq..=change.seq` (one change, or a run of deltas a
    /// `coalesce_ms` binding merged): applies it in seq order, drops a duplicate, fills a gap
    /// first.
    async fn offer_range(&mut self, first_seq: u64, change: &Change) {
        match self.replica.apply_range(first_seq, change) {
            Step::Applied => self.print(change),
            Step::Duplicate => {}
            Step::Gap { after_seq } => {
                eprintln!("gap: seq {} delivered after {after_seq}: catching up", change.seq);
                if self.catch_up().await.is_ok() {
                    // Normally read by now (a duplicate); applied when the page ended before it.
                    Box::pin(self.offer_range(first_seq, change)).await;
                }
            }
            Step::NeedsSnapshot => {
                self.print(change);
                eprintln!("seq {}: a fork's history came silently: snapshot", change.seq);
                self.snapshot().await;
            }
            Step::Rejected(why) => eprintln!("seq {} rejected: {why}", change.seq),
        }
    }

    /// Reads `session::changes` after `applied_seq` until the last page. An error leaves the
    /// replica where it got to (the next delivery or quiet period tries again).
    async fn catch_up(&mut self) -> Result<(), Error> {
        loop {
            let payload = json!({
                "session_id": self.session,
                "after_seq": self.replica.applied_seq,
                "limit": self.page,
            });
            let reply = self.call("session::changes", payload).await.inspect_err(|e| {
                eprintln!("session::changes failed: {e}");
            })?;
            let page: ChangesResponse = serde_json::from_value(reply)
                .map_err(|e| Error::Handler(format!("session::changes reply: {e}")))?;
            if self.replica.enter_epoch(&page.epoch) {
                eprintln!("the session was deleted (and maybe created again): starting over");
                continue;
            }
            if page.truncated {
                eprintln!(
                    "changes after {} are no longer kept: snapshot",
                    self.replica.applied_seq
                );
                self.snapshot().await;
                return Ok(());
            }
            for change in &page.changes {
                if let Step::Gap { .. } = self.replica.apply(change) {
                    unreachable!("a page starts right after applied_seq");
                }
                self.print(change);
            }
            if page.next_after_seq.is_none() || page.changes.is_empty() {
                return Ok(());
            }
        }
    }

    /// Replaces the replica with a snapshot read (meta + every entry), taken between two equal
    /// `latest_seq` reads so it is the state at exactly that seq.
    async fn snapshot(&mut self) {
        for _ in 0..10 {
            let Ok(before) = self.latest_seq().await else { continue };
            let sid = json!({"session_id": self.session});
            let meta = self.call("session::store::get-meta", sid.clone()).await;
            let entries = self.call("session::store::list-entries", sid).await;
            let (Ok(meta), Ok(entries)) = (meta, entries) else { continue };
            if self.latest_seq().await.ok().as_ref() != Some(&before) {
                continue;
            }
            let meta: Option<SessionMeta> = serde_json::from_value(meta).unwrap_or(None);
            let entries: ListEntriesResponse =
                serde_json::from_value(entries).unwrap_or(ListEntriesResponse { entries: vec![] });
            let (before, epoch) = before;
            self.replica = Replica::from_snapshot(
                self.session.clone(),
                meta.as_ref(),
                entries.entries,
                before,
            );
            self.replica.epoch = epoch;
            println!("{before} snapshot {} entries", self.replica.entries.len());
            return;
        }
        eprintln!("no consistent snapshot after 10 tries");
    }

    /// The feed's newest seq and its epoch.
    async fn latest_seq(&self) -> Result<(u64, Option<String>), Error> {
        let payload = json!({"session_id": self.session, "after_seq": u64::MAX >> 1, "limit": 1});
        let reply = self.call("session::changes", payload).await?;
        let seq =
            reply["latest_seq"].as_u64().ok_or_else(|| Error::Handler("no latest_seq".into()))?;
        Ok((seq, reply["epoch"].as_str().map(String::from)))
    }

    /// `<seq> <type>`, with the message's reassembled text for message changes.
    fn print(&self, change: &Change) {
        let entry_id = match change.change_type.as_str() {
            "session::message-added" | "session::message-updated" | MESSAGE_DELTA => {
                change.payload["entry_id"].as_str()
            }
            _ => None,
        };
        let text = entry_id.and_then(|id| self.replica.entries.get(id)).and_then(|entry| {
            let SessionEntry::Message { message, .. } = entry else { return None };
            Some(reassembled(message))
        });
        match (entry_id, text) {
            (Some(id), Some(text)) => println!("{} {} {id} {text}", change.seq, change.change_type),
            _ => println!("{} {}", change.seq, change.change_type),
        }
    }
}

/// `text="<every text block>"`, plus ` thinking="…"` when the message has thinking.
fn reassembled(message: &AgentMessage) -> String {
    let (mut text, mut thinking) = (String::new(), String::new());
    for block in message.content() {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Thinking { text: t, .. } => thinking.push_str(t),
            _ => {}
        }
    }
    let quoted = |s: &str| Value::String(s.to_string()).to_string();
    if thinking.is_empty() {
        format!("text={}", quoted(&text))
    } else {
        format!("text={} thinking={}", quoted(&text), quoted(&thinking))
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let metadata = WorkerMetadata {
        name: format!("session-replica-{}", &tag[..12]),
        description: Some(format!("replica of {}", args.session)),
        ..WorkerMetadata::default()
    };
    let options = InitOptions {
        metadata: Some(metadata),
        identity: WorkerIdentityMode::Explicit,
        ..Default::default()
    };
    let iii = register_worker(&args.url, session_manager::telemetry::with_telemetry(options));

    // Deliveries go to a channel; one task applies them, in arrival order, with the reads.
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let function_id = format!("replica::on-change::{tag}");
    iii.register_function(
        function_id.clone(),
        RegisterFunction::new_async(move |payload: Value| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(payload);
                Ok::<Value, Error>(json!({}))
            }
        }),
    );
    // The SDK keeps the binding and sends it again whenever it reconnects; the engine keeps it
    // while the session-manager is away and hands it to the worker when it is back.
    let trigger = iii
        .register_trigger(RegisterTriggerInput {
            trigger_type: CHANGED.into(),
            function_id,
            config: match args.coalesce_ms {
                Some(ms) => json!({"session_id": args.session, "coalesce_ms": ms}),
                None => json!({"session_id": args.session}),
            },
            metadata: None,
            namespace: None,
            trigger_namespace: None,
        })
        .expect("bind session::changed");
    if let Err(e) = iii.wait_until_registered(Duration::from_secs(30)).await {
        eprintln!("the engine at {} did not accept this client: {e}", args.url);
        std::process::exit(1);
    }

    let mut follower = Follower {
        iii: iii.clone(),
        session: args.session.clone(),
        page: args.page,
        replica: Replica::new(&args.session),
    };
    // Bound first, then caught up: a change is delivered, read here, or both.
    while follower.catch_up().await.is_err() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!("caught up at seq {}", follower.replica.applied_seq);

    let quiet = Duration::from_millis(args.poll_ms.max(10));
    loop {
        if args.exit_at_seq.is_some_and(|seq| follower.replica.applied_seq >= seq) {
            break;
        }
        match tokio::time::timeout(quiet, rx.recv()).await {
            Ok(Some(payload)) => match serde_json::from_value::<ChangedEvent>(payload) {
                Ok(event) if event.session_id == args.session => {
                    let first_seq = event.first_seq.unwrap_or(event.seq);
                    let change = event.into_change();
                    follower.offer_range(first_seq, &change).await;
                }
                Ok(event) => eprintln!("delivery of another session {}", event.session_id),
                Err(e) => eprintln!("not a session::changed delivery: {e}"),
            },
            Ok(None) => break,
            // Quiet: a lost last delivery leaves a tail only a read finds.
            Err(_) => {
                let _ = follower.catch_up().await;
            }
        }
    }
    trigger.unregister();
    iii.shutdown_async().await;
}
