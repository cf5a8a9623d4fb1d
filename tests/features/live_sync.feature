@pure
Feature: live sync — the change feed, session::changed and append-delta
  Every mutation that fires seed events records one change per event with the session's next
  seq (from 1, no gaps, never reused); session::changes reads them back after a seq;
  session::changed delivers each with its seq; append-delta streams text in O(delta).

  # Prevents: seqs with gaps, out of order, or given to an idempotent replay.
  Scenario: every event gets the next seq and the feed pages in seq order
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | x    |
    And I called "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}}
    And I called "session::set-status" with {"session_id": "s1", "status": "working"}
    When I call "session::changes" with {"session_id": "s1", "limit": 2}
    Then the response contains {"session_id": "s1", "latest_seq": 4, "next_after_seq": 2, "truncated": false}
    And the "seq" values at "changes" are "1, 2"
    And the "type" values at "changes" are "session::created, session::message-added"
    When I call "session::changes" with {"session_id": "s1", "after_seq": 2, "limit": 2}
    Then the "seq" values at "changes" are "3, 4"
    And the "type" values at "changes" are "session::message-added, session::status-changed"
    And the response field "next_after_seq" is null
    When I call "session::changes" with {"session_id": "s1", "after_seq": 4}
    Then the response contains {"changes": [], "latest_seq": 4, "next_after_seq": null, "truncated": false}

  # Prevents: a change whose payload is not exactly what the seed trigger delivered.
  Scenario: a change carries the seed payload and the mutation's time
    Given a session "s1"
    And the clock advances by 7 ms
    When I call "session::set-meta" with {"session_id": "s1", "title": "T"}
    Then event 1 is "session::meta-updated" with {"session_id": "s1", "title": "T", "description": "", "timestamp": 1000007}
    When I call "session::changes" with {"session_id": "s1", "after_seq": 1}
    Then the response field "changes" is:
      """
      [{"seq": 2, "type": "session::meta-updated", "timestamp": 1000007, "epoch": "f_001",
        "payload": {"session_id": "s1", "title": "T", "description": "", "timestamp": 1000007}}]
      """

  # Prevents: the feed being lost or renumbered when the store restarts.
  Scenario: seqs survive a restart and continue
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "working"}
    When the store restarts
    And I call "session::set-status" with {"session_id": "s1", "status": "done"}
    And I call "session::changes" with {"session_id": "s1"}
    Then the "seq" values at "changes" are "1, 2, 3"
    And the response field "latest_seq" is 3

  # Prevents: a deleted session's feed (its payloads) staying behind, and a re-created id's
  # seqs being taken for the old session's by a replica (issue 37: the feed's epoch).
  Scenario: a delete takes the feed with it and a re-created id starts a new epoch at seq 1
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "working"}
    When I call "session::changes" with {"session_id": "s1"}
    Then the response field "epoch" is "f_001"
    And the "epoch" values at "changes" are "f_001, f_001"
    When I call "session::delete" with {"session_id": "s1"}
    And I call "session::changes" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "changes": [], "latest_seq": 0, "next_after_seq": null, "truncated": false}
    When I call "session::ensure" with {"session_id": "s1"}
    And I call "session::changes" with {"session_id": "s1"}
    Then the "seq" values at "changes" are "1"
    And the "type" values at "changes" are "session::created"
    And the response field "epoch" is "f_002"

  # Prevents: a reader behind the retention window silently missing changes.
  Scenario: changes older than the retention are reported truncated
    Given the feed retention is 2 changes
    And a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "working"}
    And I called "session::set-status" with {"session_id": "s1", "status": "done"}
    And I called "session::set-status" with {"session_id": "s1", "status": "idle"}
    When I call "session::changes" with {"session_id": "s1", "after_seq": 1}
    Then the response is {"session_id": "s1", "epoch": "f_001", "changes": [], "latest_seq": 4, "next_after_seq": null, "truncated": true}
    When I call "session::changes" with {"session_id": "s1", "after_seq": 2}
    Then the "seq" values at "changes" are "3, 4"
    And the response field "truncated" is false

  # Prevents: an unknown session erroring instead of reading as an empty feed.
  Scenario: a session that never existed has an empty feed
    When I call "session::changes" with {"session_id": "nope"}
    Then the response is {"session_id": "nope", "changes": [], "latest_seq": 0, "next_after_seq": null, "truncated": false}

  # Prevents: a replayed append, or an event-silent call, taking a seq.
  Scenario: idempotent replays and event-silent calls record nothing
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}}
    When I call "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}}
    And I call "session::set-draft" with {"session_id": "s1", "draft": "typing"}
    And I call "session::set-status" with {"session_id": "s1", "status": "idle"}
    And I call "session::changes" with {"session_id": "s1"}
    Then the response field "latest_seq" is 2

  # Prevents: a delta replacing the text, touching the wrong block or skipping the revision.
  Scenario: append-delta streams into the last text block and seed subscribers get the full message
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | He   |
    And the clock advances by 5 ms
    When I call "session::append-delta" with {"session_id": "s1", "entry_id": "a1", "text": "llo"}
    Then the response is {"updated": true, "revision": 1}
    And the events fired are "session::message-updated"
    And event 1 is "session::message-updated" containing {"entry_id": "a1", "revision": 1, "timestamp": 1000005}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "Hello"}]
    And the response field "entry.revision" is 1
    When I call "session::changes" with {"session_id": "s1", "after_seq": 2}
    Then the response field "changes" is:
      """
      [{"seq": 3, "type": "session::message-delta", "timestamp": 1000005, "epoch": "f_001",
        "payload": {"session_id": "s1", "entry_id": "a1", "revision": 1, "block_index": 0, "text": "llo"}}]
      """

  # Prevents: thinking text landing in a text block, or a delta after another kind overwriting it.
  Scenario: a delta of another kind than the last block opens a new block
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | A    |
    When I call "session::append-delta" with {"session_id": "s1", "entry_id": "a1", "thinking": "hm"}
    And I call "session::append-delta" with {"session_id": "s1", "entry_id": "a1", "thinking": "m"}
    And I call "session::append-delta" with {"session_id": "s1", "entry_id": "a1", "text": "B"}
    Then the response is {"updated": true, "revision": 3}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "A"}, {"type": "thinking", "text": "hmm"}, {"type": "text", "text": "B"}]
    When the store restarts
    And I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "A"}, {"type": "thinking", "text": "hmm"}, {"type": "text", "text": "B"}]
    # The feed compacts the entry's superseded deltas into one run and serves the newest as the
    # message's current state.
    When I call "session::changes" with {"session_id": "s1", "after_seq": 2}
    Then the "type" values at "changes" are "session::compacted, session::message-updated"
    And the "seq" values at "changes" are "4, 5"

  # Prevents: a stale writer's delta landing (optimistic concurrency like update-message).
  Scenario: append-delta with a stale expected_revision writes nothing
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | A    |
    When I call "session::append-delta" with {"session_id": "s1", "entry_id": "a1", "text": "B", "expected_revision": 3}
    Then the response is {"updated": false, "revision": 0}
    And no events fired
    When I call "session::changes" with {"session_id": "s1"}
    Then the response field "latest_seq" is 2

  # Prevents: bad deltas being half-applied or answered with the wrong code.
  Scenario Outline: bad append-delta requests fail and change nothing
    Given a session "s1"
    And "s1" has entries:
      | id | role  | text |
      | a1 | assistant | A |
      | c1 | entry | 1    |
    When I call "session::append-delta" with <request>
    Then the call fails with "<code>"
    And no events fired
    When I call "session::changes" with {"session_id": "s1"}
    Then the response field "latest_seq" is 3

    Examples:
      | request                                                                    | code                      |
      | {"session_id": "s1", "entry_id": "a1", "text": "x", "thinking": "y"}       | session/invalid_request   |
      | {"session_id": "s1", "entry_id": "a1"}                                     | session/invalid_request   |
      | {"session_id": "s1", "entry_id": "c1", "text": "x"}                        | session/invalid_entry_kind |
      | {"session_id": "s1", "entry_id": "zz", "text": "x"}                        | session/entry_not_found   |
      | {"session_id": "s2", "entry_id": "a1", "text": "x"}                        | session/not_found         |
      | {"session_id": "s1", "entry_id": "a1", "text": 5}                          | session/invalid_request   |

  # Prevents: session::changed deliveries without their seq, or filters leaking other sessions.
  Scenario: session::changed delivers each change with its seq, filtered
    Given a session "s1"
    And a session "s2"
    And a binding "all" on "session::changed" with config {"session_id": "s1"}
    And a binding "status" on "session::changed" with config {"types": ["session::status-changed"]}
    When I call "session::set-status" with {"session_id": "s1", "status": "working"}
    And I call "session::set-meta" with {"session_id": "s1", "title": "T"}
    And I call "session::set-status" with {"session_id": "s2", "status": "done"}
    Then binding "all" received 2 events
    And binding "all" last received exactly {"session_id": "s1", "epoch": "f_001", "seq": 3, "type": "session::meta-updated", "timestamp": 1000000, "payload": {"session_id": "s1", "title": "T", "description": "", "timestamp": 1000000}}
    And binding "status" received "session_id" values "s1, s2"

  # Prevents: malformed session::changed configs being accepted and silently matching nothing.
  Scenario Outline: malformed session::changed configs are rejected
    When I bind "b" on "session::changed" with config <config>
    Then the binding is rejected with "<why>"

    Examples:
      | config                          | why                 |
      | {"roles": ["user"]}             | unknown field       |
      | {"types": ["session::nope"]}    | unknown change type |
      | {"types": "session::created"}   | invalid type        |
      | ["s1"]                          | expected a config object |
      | {"coalesce_ms": 0}              | not within 1..=10000 |
      | {"coalesce_ms": 10001}          | not within 1..=10000 |
      | {"coalesce_ms": -5}             | not within 1..=10000 |
      | {"coalesce_ms": 1.5}            | invalid type        |

  # Prevents: a valid coalescing binding being refused.
  Scenario: a session::changed binding may coalesce streaming deltas
    When I bind "b" on "session::changed" with config {"session_id": "s1", "coalesce_ms": 50}
    Then the binding is accepted
