//! Criterion benches of the fs store (issue 3), each beside its raw baseline in the same run:
//! durable appends vs a raw write + fdatasync loop, 32 concurrent sessions with group commit,
//! open + first list, newest tail of a big session, disk bytes after streaming updates, and what
//! the change feed adds to an append.
//! Sizes are scaled down by default (see BENCHMARKS.md); `FS_BENCH_SCALE=10` approaches the
//! issue's sizes.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use session_core::conformance::{message_entry, sample_meta};
use session_core::jsonl;
use session_core::record::Record;
use session_core::{ChangeSet, Store, Write};
use session_store_fs::{FsConfig, FsStore, SyncMode};

fn scale() -> usize {
    std::env::var("FS_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
}

const TEXT: &str =
    "The quick brown fox jumps over the lazy dog, streaming tokens into a durable log. ";

fn store(dir: &std::path::Path, sync: SyncMode) -> FsStore {
    FsStore::open(FsConfig::new(dir).sync(sync)).expect("open")
}

fn create(store: &FsStore, sid: &str) {
    store.apply(&ChangeSet::new(sid).with(Write::PutMeta(sample_meta(sid, 1)))).expect("create");
}

fn append(store: &FsStore, sid: &str, n: u64) {
    let entry = message_entry(&format!("e{n}"), None, n as i64, TEXT);
    store
        .apply(&ChangeSet::new(sid).with(Write::CommitAppend { entry, parent_explicit: false }))
        .expect("append");
}

/// An append as the public `session::append` writes it since live sync: the commit plus its feed
/// change (the log gets a `begin` marker, the `append` line and a payload-less `change` line).
fn append_with_feed(store: &FsStore, sid: &str, n: u64) {
    let entry = message_entry(&format!("e{n}"), None, n as i64, TEXT);
    let feed = Write::Feed {
        timestamp: n as i64,
        retention: session_core::feed::Retention::default(),
        epoch: None,
        changes: vec![session_core::feed::PendingChange::CommittedAppend],
    };
    let changes =
        ChangeSet::new(sid).with(Write::CommitAppend { entry, parent_explicit: false }).with(feed);
    store.apply(&changes).expect("append");
}

fn record_len() -> usize {
    let entry = message_entry("e1000", None, 1000, TEXT);
    let meta = sample_meta("s", 1);
    jsonl::encode_record(&Record::Append { entry, meta }).len()
}

fn appends_one_session(c: &mut Criterion) {
    let mut g = c.benchmark_group("append_1_session");
    g.throughput(Throughput::Elements(1)).sample_size(20).measurement_time(Duration::from_secs(3));
    let line = vec![b'x'; record_len()];
    let dir = tempfile::tempdir().expect("tempdir");
    let mut raw =
        OpenOptions::new().create(true).append(true).open(dir.path().join("raw")).expect("open");
    g.bench_function("raw_write_fdatasync", |b| {
        b.iter(|| {
            raw.write_all(&line).expect("write");
            raw.sync_data().expect("sync");
        })
    });
    // The plain commit, and (`_with_feed`) what the change feed adds to an append beside it.
    type Append = fn(&FsStore, &str, u64);
    let cases: [(&str, SyncMode, Append); 5] = [
        ("fs_always", SyncMode::Always, append),
        ("fs_group", SyncMode::Group, append),
        ("fs_never", SyncMode::Never, append),
        ("fs_group_with_feed", SyncMode::Group, append_with_feed),
        ("fs_never_with_feed", SyncMode::Never, append_with_feed),
    ];
    for (name, mode, write) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = store(dir.path(), mode);
        create(&s, "s");
        let mut n = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                write(&s, "s", n);
            })
        });
    }
    let mut raw_nosync =
        OpenOptions::new().create(true).append(true).open(dir.path().join("raw2")).expect("open");
    g.bench_function("raw_write_no_sync", |b| {
        b.iter(|| raw_nosync.write_all(&line).expect("write"))
    });
    g.finish();
}

/// One leader `fdatasync`s the shared file for everything written before it started; the others
/// wait for a flush that started after their write (a shared write-ahead log's group commit).
#[derive(Default)]
struct SharedFlush {
    state: std::sync::Mutex<(u64, u64, bool)>, // (issued, durable, flushing)
    flushed: std::sync::Condvar,
}

impl SharedFlush {
    fn wait(&self, file: &std::fs::File) {
        let mut st = self.state.lock().expect("lock");
        st.0 += 1;
        let ticket = st.0;
        while st.1 < ticket {
            if st.2 {
                st = self.flushed.wait(st).expect("wait");
                continue;
            }
            st.2 = true;
            let last = st.0;
            drop(st);
            file.sync_data().expect("sync");
            st = self.state.lock().expect("lock");
            (st.1, st.2) = (last, false);
            self.flushed.notify_all();
        }
    }
}

fn appends_32_sessions(c: &mut Criterion) {
    let mut g = c.benchmark_group("append_32_sessions");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    const THREADS: usize = 32;
    g.throughput(Throughput::Elements(THREADS as u64));
    // The disk's bounds, same run: 32 threads appending a record-sized line and flushing, (a) each
    // to its own file with its own `fdatasync` (what the store does), (b) all to one shared log
    // with one `fdatasync` per batch (a write-ahead log's group commit).
    let line = vec![b'x'; record_len()];
    let raw_dir = tempfile::tempdir().expect("tempdir");
    let files: Vec<std::fs::File> = (0..THREADS)
        .map(|t| {
            let path = raw_dir.path().join(format!("raw{t}"));
            OpenOptions::new().create(true).append(true).open(path).expect("open")
        })
        .collect();
    g.bench_function("raw_own_file_write_fdatasync", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for file in &files {
                    let line = &line;
                    scope.spawn(move || {
                        for _ in 0..iters {
                            (&*file).write_all(line).expect("write");
                            file.sync_data().expect("sync");
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    let shared =
        OpenOptions::new().create(true).append(true).open(raw_dir.path().join("log")).expect("log");
    let flush = SharedFlush::default();
    g.bench_function("raw_shared_log_group_fdatasync", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for _ in 0..THREADS {
                    let (line, shared, flush) = (&line, &shared, &flush);
                    scope.spawn(move || {
                        for _ in 0..iters {
                            (&*shared).write_all(line).expect("write");
                            flush.wait(shared);
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    for (name, mode) in [
        ("fs_group", SyncMode::Group),
        ("fs_always", SyncMode::Always),
        ("fs_never", SyncMode::Never),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = Arc::new(store(dir.path(), mode));
        for t in 0..THREADS {
            create(&s, &format!("s{t}"));
        }
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        // Each iteration = one durable append in each of 32 sessions, from 32 threads.
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                std::thread::scope(|scope| {
                    for t in 0..THREADS {
                        let (s, counter) = (Arc::clone(&s), Arc::clone(&counter));
                        scope.spawn(move || {
                            for _ in 0..iters {
                                let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                append(&s, &format!("s{t}"), n);
                            }
                        });
                    }
                });
                start.elapsed()
            })
        });
    }
    g.finish();
}

fn open_and_list(c: &mut Criterion) {
    let sessions = 2_000 * scale();
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let s = store(dir.path(), SyncMode::Never);
        for i in 0..sessions {
            let sid = format!("s{i}");
            create(&s, &sid);
            for n in 0..20 {
                append(&s, &sid, n);
            }
        }
    }
    let bytes: u64 = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    eprintln!("open_and_first_list: {sessions} sessions, {} MB on disk", bytes / 1_000_000);
    let mut g = c.benchmark_group("open_and_first_list");
    g.sample_size(10);
    g.bench_function(format!("{sessions}_sessions_with_catalog"), |b| {
        b.iter(|| {
            let s = store(dir.path(), SyncMode::Never);
            assert_eq!(s.list_metas().expect("list").len(), sessions);
        })
    });
    g.bench_function(format!("{sessions}_sessions_no_catalog"), |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(dir.path().join(session_store_fs::CATALOG_FILE));
            let s = store(dir.path(), SyncMode::Never);
            assert_eq!(s.list_metas().expect("list").len(), sessions);
        })
    });
    g.finish();
}

fn tail_of_big_session(c: &mut Criterion) {
    let entries = 10_000 * scale() as u64;
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path(), SyncMode::Never);
    create(&s, "big");
    for n in 0..entries {
        append(&s, "big", n);
    }
    drop(s);
    let mut g = c.benchmark_group("tail_of_big_session");
    g.sample_size(10);
    let walk = |s: &FsStore| {
        let mut cursor = s.get_active_leaf("big").expect("leaf");
        for _ in 0..50 {
            let Some(id) = cursor else { break };
            cursor = s
                .get_entry("big", &id)
                .expect("entry")
                .and_then(|e| e.parent_id().map(String::from));
        }
    };
    g.bench_function(format!("{entries}_entries_cold_open_plus_tail50"), |b| {
        b.iter(|| walk(&store(dir.path(), SyncMode::Never)))
    });
    let warm = store(dir.path(), SyncMode::Never);
    walk(&warm);
    g.bench_function(format!("{entries}_entries_warm_tail50"), |b| b.iter(|| walk(&warm)));
    g.finish();
}

fn streaming_disk_bytes(_c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path(), SyncMode::Never);
    create(&s, "s");
    append(&s, "s", 0);
    let mut text = String::new();
    for i in 0..2000u64 {
        text.push_str("tok ");
        let mut entry = message_entry("e0", None, 0, &text);
        if let session_core::wire::SessionEntry::Message { revision, .. } = &mut entry {
            *revision = i + 1;
        }
        s.apply(&ChangeSet::new("s").with(Write::PutEntry(entry))).expect("update");
    }
    s.wait_for_compactions();
    let disk = std::fs::metadata(dir.path().join("s.jsonl")).expect("stat").len();
    let live = jsonl::encode_snapshot(
        &jsonl::replay(&std::fs::read(dir.path().join("s.jsonl")).expect("read")).0,
    )
    .len();
    let naive: usize = (1..=2000).map(|i| 4 * i + 250).sum();
    eprintln!("streaming_disk_bytes: 2000 growing updates: disk {disk} B, live {live} B, ratio {:.2}, uncompacted ≈ {naive} B", disk as f64 / live as f64);
}

criterion_group!(
    benches,
    appends_one_session,
    appends_32_sessions,
    open_and_list,
    tail_of_big_session,
    streaming_disk_bytes
);
criterion_main!(benches);
