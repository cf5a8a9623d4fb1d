Feature: bridge topology across engines
  A main engine whose session-manager stores on fs, and engines whose session-managers bridge to
  it (contract §5.6–§5.8). Instances are "main", "bridge 1", "bridge 2"; the bridges' store calls
  time out after 2 s. Without III_BIN every scenario here is reported skipped.

  # Prevents: bridged writes stored locally, or a bridge serving the store protocol.
  @engine @serial
  Scenario: writes through a bridge land in the main's data_dir
    Given a main engine with session-manager and 1 bridged engine
    When on "bridge 1" the client calls "session::create" with {"title": "bridged", "metadata": {"owner": "u"}} and keeps "session_id" as "sid"
    And on "bridge 1" the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}
    Then the engine call succeeds
    And the worker data dir "data/session-manager" holds 1 session file
    And on "bridge 1" the worker data dir "data/session-manager" holds 0 session files
    When the client calls "session::get" with {"session_id": "${sid}"}
    Then the engine response contains {"meta": {"title": "bridged", "message_count": 1}}
    When on "bridge 1" the client calls "session::list" with {"metadata": {"owner": "u"}}
    Then the engine response field "sessions" has 1 item
    When on "bridge 1" the client calls "session::store::list-metas" with {}
    Then the engine call fails mentioning "bridge mode"

  # Prevents: events lost or duplicated across engines (echo loops, double local emission).
  @engine @serial
  Scenario: every subscriber on every engine receives each event exactly once
    Given a main engine with session-manager and 2 bridged engines
    And on "main" handler "created" is bound to "session::created" with config {}
    And on "bridge 1" handler "created" is bound to "session::created" with config {}
    And on "bridge 2" handler "created" is bound to "session::created" with config {}
    And on "bridge 2" handler "mine" is bound to "session::created" with config {"metadata": {"owner": "u2"}}
    When on "bridge 1" the client calls "session::create" with {"metadata": {"owner": "u1"}} and keeps "session_id" as "s1"
    And on "main" the client calls "session::create" with {"metadata": {"owner": "u2"}} and keeps "session_id" as "s2"
    And on "bridge 2" the client calls "session::create" with {"metadata": {"owner": "u2"}}
    Then on "main" handler "created" receives 3 events
    And on "bridge 1" handler "created" receives 3 events
    And on "bridge 2" handler "created" receives 3 events
    And on "bridge 2" handler "mine" receives 2 events

  # Prevents: the change feed working on the main only (a bridged mutation's seq lost on the way).
  @engine @serial
  Scenario: session::changed subscribers on every engine get each change with its seq
    Given a main engine with session-manager and 2 bridged engines
    When on "main" the client calls "session::create" with {"title": "feed"} and keeps "session_id" as "sid"
    Given on "main" handler "feed" is bound to "session::changed" with config {"session_id": "${sid}"}
    And on "bridge 1" handler "feed" is bound to "session::changed" with config {"session_id": "${sid}"}
    And on "bridge 2" handler "feed" is bound to "session::changed" with config {"session_id": "${sid}"}
    When on "bridge 1" the client calls "session::set-status" with {"session_id": "${sid}", "status": "working"}
    And on "bridge 2" the client calls "session::set-meta" with {"session_id": "${sid}", "title": "renamed"}
    And on "main" the client calls "session::set-status" with {"session_id": "${sid}", "status": "done"}
    Then on "main" handler "feed" receives 3 events
    And on "bridge 1" handler "feed" receives 3 events
    And on "bridge 2" handler "feed" receives 3 events
    And on "bridge 2" handler "feed" received "seq" values in any order "2, 3, 4"
    And on "main" handler "feed" received "seq" values in any order "2, 3, 4"
    And on "bridge 1" handler "feed" received "type" values in any order "session::status-changed, session::meta-updated, session::status-changed"
    When on "bridge 2" the client calls "session::changes" with {"session_id": "${sid}", "after_seq": 1}
    Then the engine response field "latest_seq" is 4
    And the engine response field "changes" has 3 items

  # Prevents: lost or duplicated entries, or a forked chain, when two bridges append at once.
  @engine @serial
  Scenario: concurrent appends from two bridges keep one chain with every entry once
    Given a main engine with session-manager and 2 bridged engines
    When on "main" the client calls "session::create" with {"title": "shared"} and keeps "session_id" as "sid"
    Given on "main" handler "added" is bound to "session::message-added" with config {"session_id": "${sid}"}
    And on "bridge 1" handler "added" is bound to "session::message-added" with config {"session_id": "${sid}"}
    And on "bridge 2" handler "added" is bound to "session::message-added" with config {"session_id": "${sid}"}
    When every bridge appends 25 messages to "${sid}" concurrently
    Then the main holds every acknowledged id of "${sid}" exactly once in one chain
    And on "main" handler "added" receives 50 events
    And on "bridge 1" handler "added" receives 50 events
    And on "bridge 2" handler "added" receives 50 events

  # Prevents: a dead main hanging bridge callers, or a bridge that never recovers.
  @engine @serial
  Scenario: an unreachable main gives session/storage and the bridge recovers when it returns
    Given a main engine with session-manager and 1 bridged engine
    When on "bridge 1" the client calls "session::create" with {"title": "before"} and keeps "session_id" as "sid"
    And the main engine is killed
    And on "bridge 1" the client calls "session::get" with {"session_id": "${sid}"}
    Then the engine call fails with code "session/storage"
    And the engine call fails mentioning "bridge session::store::get-meta failed"
    When the main engine is started again
    Then on "bridge 1" the client call "session::get" with {"session_id": "${sid}"} succeeds within 30 seconds
    And the engine response contains {"meta": {"title": "before"}}
    Given on "bridge 1" handler "created" is bound to "session::created" with config {}
    When on "main" the client calls "session::create" with {"title": "after the restart"}
    Then on "bridge 1" handler "created" receives 1 event
    When the main worker is killed with SIGKILL
    And on "bridge 1" the client calls "session::set-status" with {"session_id": "${sid}", "status": "working"}
    Then the engine call fails with code "session/storage"
    When the main worker is started again
    Then on "bridge 1" the client call "session::set-status" with {"session_id": "${sid}", "status": "done"} succeeds within 30 seconds

  # Prevents: acknowledged writes lost when the main dies under load, or a bridge stuck after it.
  @engine @serial
  Scenario: killing the main mid-load loses nothing acknowledged and service resumes
    Given a main engine with session-manager and 2 bridged engines
    When on "main" the client calls "session::create" with {"title": "load"} and keeps "session_id" as "sid"
    And every bridge appends 30 messages to "${sid}" concurrently while the main worker is killed and restarted
    Then some bridge appends answered "session/storage" meanwhile
    And the main holds every acknowledged id of "${sid}" exactly once in one chain

  # Prevents: a reload that keeps the old relay feeding, skips the resync or cannot come back.
  @engine @serial
  Scenario: hot reload bridge to fs and back, with resync
    Given a main engine with session-manager and 1 bridged engine
    When on "main" the client calls "session::create" with {"title": "on main"}
    Given on "bridge 1" handler "created" is bound to "session::created" with config {}
    And on "bridge 1" handler "deleted" is bound to "session::deleted" with config {}
    When on "bridge 1" the stored configuration is set to {"adapter": {"name": "fs", "config": {"data_dir": "data/session-manager"}}}
    Then on "bridge 1" the config status becomes {"last_outcome": "applied", "rejected_reloads": 0}
    And on "bridge 1" handler "deleted" receives 1 event
    When on "main" the client calls "session::create" with {"title": "unseen by the fs bridge"}
    And on "bridge 1" the client calls "session::list" with {}
    Then the engine response field "sessions" has 0 items
    And on "bridge 1" handler "created" receives 0 events
    When on "bridge 1" the stored configuration is set to {"adapter": {"name": "bridge", "config": {"url": "${main_url}", "timeout_ms": 2000}}}
    Then on "bridge 1" the config status becomes {"last_outcome": "applied", "rejected_reloads": 0}
    And on "bridge 1" handler "created" receives 2 events
    When on "main" the client calls "session::create" with {"title": "after"}
    Then on "bridge 1" handler "created" receives 3 events
    When on "bridge 1" the stored configuration is set to {"adapter": {"name": "bridge", "config": {"url": "${bridge_url}"}}}
    Then on "bridge 1" the config status becomes {"last_outcome": "rejected", "rejected_reloads": 1}

  # Prevents: half a fork on the main when it dies mid-change-set (through the seed protocol a
  # fork is one call per copied entry, then the leaf, then the meta).
  @engine @serial
  Scenario: a fork through a bridge lands on our main all or nothing, even when the main is killed
    Given a main engine with session-manager and 1 bridged engine
    Then the main serves "session::store::apply"
    When on "main" the client calls "session::create" with {"title": "source"} and keeps "session_id" as "sid"
    And on "main" the client calls "session::append-many" with {"session_id": "${sid}", "messages": [{"role": "user", "content": [{"type": "text", "text": "m0"}], "timestamp": 0}, {"role": "user", "content": [{"type": "text", "text": "m1"}], "timestamp": 1}, {"role": "user", "content": [{"type": "text", "text": "m2"}], "timestamp": 2}, {"role": "user", "content": [{"type": "text", "text": "m3"}], "timestamp": 3}, {"role": "user", "content": [{"type": "text", "text": "m4"}], "timestamp": 4}, {"role": "user", "content": [{"type": "text", "text": "m5"}], "timestamp": 5}, {"role": "user", "content": [{"type": "text", "text": "m6"}], "timestamp": 6}, {"role": "user", "content": [{"type": "text", "text": "m7"}], "timestamp": 7}, {"role": "user", "content": [{"type": "text", "text": "m8"}], "timestamp": 8}, {"role": "user", "content": [{"type": "text", "text": "m9"}], "timestamp": 9}, {"role": "user", "content": [{"type": "text", "text": "m10"}], "timestamp": 10}, {"role": "user", "content": [{"type": "text", "text": "m11"}], "timestamp": 11}, {"role": "user", "content": [{"type": "text", "text": "m12"}], "timestamp": 12}, {"role": "user", "content": [{"type": "text", "text": "m13"}], "timestamp": 13}, {"role": "user", "content": [{"type": "text", "text": "m14"}], "timestamp": 14}, {"role": "user", "content": [{"type": "text", "text": "m15"}], "timestamp": 15}, {"role": "user", "content": [{"type": "text", "text": "m16"}], "timestamp": 16}, {"role": "user", "content": [{"type": "text", "text": "m17"}], "timestamp": 17}, {"role": "user", "content": [{"type": "text", "text": "m18"}], "timestamp": 18}, {"role": "user", "content": [{"type": "text", "text": "m19"}], "timestamp": 19}]}
    Then the engine call succeeds
    When "bridge 1" forks "${sid}" while the main worker is killed 6 times mid-fork
    Then every fork of "${sid}" on the main holds all of its history or none of it

  # Prevents: a bridge that needs our extension to work against a v1.0.32 main.
  @engine @serial
  Scenario: against a main without session::store::apply the bridge still works
    Given a seed-only main engine with session-manager and 1 bridged engine
    Then the main does not serve "session::store::apply"
    When on "bridge 1" the client calls "session::create" with {"title": "seed main"} and keeps "session_id" as "sid"
    And on "bridge 1" the client calls "session::append-many" with {"session_id": "${sid}", "messages": [{"role": "user", "content": [], "timestamp": 1}, {"role": "user", "content": [], "timestamp": 2}]}
    And on "bridge 1" the client calls "session::append" with {"session_id": "${sid}", "entry_id": "e_last", "message": {"role": "user", "content": [], "timestamp": 3}}
    And on "bridge 1" the client calls "session::fork" with {"session_id": "${sid}", "entry_id": "e_last"} and keeps "session_id" as "forked"
    Then the engine call succeeds
    When on "main" the client calls "session::get" with {"session_id": "${forked}"}
    Then the engine response contains {"meta": {"message_count": 3, "forked_from": "${sid}"}}
