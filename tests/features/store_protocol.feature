@pure
Feature: session::store::* protocol
  The 18 raw storage functions an authoritative instance serves to bridged ones. They bypass the
  domain logic (no validation beyond shape, no events) except commit-append, which is the
  authoritative append commit, and publish-events, which re-emits well-formed envelopes.

  # Prevents: put-meta applying domain rules (firing created, resetting fields) or get-meta erroring on unknown ids.
  Scenario: put-meta and get-meta round-trip a meta verbatim, silently
    When I call "session::store::put-meta" with:
      """
      {"meta": {"session_id": "s1", "title": "T", "description": "D", "status": "working",
        "status_reason": "r", "kind": "automation", "metadata": {"owner": "u1"},
        "created_at": 5, "updated_at": 7, "message_count": 3}}
      """
    Then the response is {"ok": true}
    And no events fired
    When I call "session::store::get-meta" with {"session_id": "s1"}
    Then the response is:
      """
      {"session_id": "s1", "title": "T", "description": "D", "status": "working",
        "status_reason": "r", "kind": "automation", "metadata": {"owner": "u1"},
        "created_at": 5, "updated_at": 7, "message_count": 3}
      """
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 3
    When I call "session::store::get-meta" with {"session_id": "ghost"}
    Then the response is null

  # Prevents: a stored meta written before `kind` existed failing to read instead of defaulting to user.
  Scenario: a meta without kind reads back as a user session
    When I call "session::store::put-meta" with {"meta": {"session_id": "old", "title": "", "description": "", "status": "idle", "created_at": 1, "updated_at": 1, "message_count": 0}}
    Then the response is {"ok": true}
    When I call "session::store::get-meta" with {"session_id": "old"}
    Then the response field "kind" is "user"

  # Prevents: list-metas missing sessions or including deleted ones; delete-meta erroring on unknown ids.
  Scenario: list-metas lists every meta and delete-meta removes only the meta
    When I call "session::store::list-metas"
    Then the response is {"metas": []}
    Given a session "a"
    And a session "b"
    And "b" has entries:
      | id | role | text |
      | e1 | user | hi   |
    When I call "session::store::list-metas" with {}
    Then the "session_id" values at "metas" are in any order "a, b"
    When I call "session::store::delete-meta" with {"session_id": "b"}
    Then the response is {"ok": true}
    And no events fired
    And no "session::deleted" event fired
    When I call "session::store::list-metas"
    Then the "session_id" values at "metas" are in any order "a"
    When I call "session::store::list-entries" with {"session_id": "b"}
    Then the "id" values at "entries" are in any order "e1"
    When I call "session::store::delete-meta" with {"session_id": "ghost"}
    Then the response is {"ok": true}

  # Prevents: put-entry moving the leaf or counting messages (raw writes), or get-entry erroring on unknown ids.
  Scenario: put-entry, get-entry and list-entries are raw entry storage
    Given a session "s1"
    When I call "session::store::put-entry" with:
      """
      {"session_id": "s1", "entry": {"kind": "message", "id": "e1", "parent_id": null,
        "timestamp": 10, "revision": 0,
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}}
      """
    Then the response is {"ok": true}
    And no events fired
    And no "session::message-added" event fired
    When I call "session::store::put-entry" with:
      """
      {"session_id": "s1", "entry": {"kind": "custom", "id": "c1", "parent_id": "e1",
        "timestamp": 11, "custom_type": "mark"}}
      """
    And I call "session::store::get-entry" with {"session_id": "s1", "entry_id": "c1"}
    Then the response is {"kind": "custom", "id": "c1", "parent_id": "e1", "timestamp": 11, "revision": 0, "custom_type": "mark", "data": null}
    When I call "session::store::get-entry" with {"session_id": "s1", "entry_id": "e404"}
    Then the response is null
    When I call "session::store::list-entries" with {"session_id": "s1"}
    Then the "id" values at "entries" are in any order "e1, c1"
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": null}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 0

  # Prevents: put-entry appending a duplicate instead of replacing the snapshot (last write wins).
  Scenario: put-entry replaces an entry with the same id
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | assistant | v0   |
    When I call "session::store::put-entry" with:
      """
      {"session_id": "s1", "entry": {"kind": "message", "id": "e1", "parent_id": null,
        "timestamp": 1000000, "revision": 1,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "v1"}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}}
      """
    And I call "session::store::list-entries" with {"session_id": "s1"}
    Then the response field "entries" has 1 item
    And the response field "entries.0.revision" is 1
    And the response field "entries.0.message.content" is [{"type": "text", "text": "v1"}]

  # Prevents: delete-entries leaving entries behind or touching the meta.
  Scenario: delete-entries removes every entry and keeps the meta
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text  |
      | e1 | user      | hi    |
      | e2 | assistant | hello |
    When I call "session::store::delete-entries" with {"session_id": "s1"}
    Then the response is {"ok": true}
    And no events fired
    When I call "session::store::list-entries" with {"session_id": "s1"}
    Then the response is {"entries": []}
    When I call "session::store::get-meta" with {"session_id": "s1"}
    Then the response field "message_count" is 2
    When I call "session::store::delete-entries" with {"session_id": "ghost"}
    Then the response is {"ok": true}

  # Prevents: the leaf pointer functions validating entries (they are raw) or delete-active-leaf not clearing it.
  Scenario: get/set/delete-active-leaf move the raw pointer
    Given a session "s1"
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": null}
    When I call "session::store::set-active-leaf" with {"session_id": "s1", "entry_id": "e9"}
    Then the response is {"ok": true}
    And no events fired
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": "e9"}
    When I call "session::store::delete-active-leaf" with {"session_id": "s1"}
    Then the response is {"ok": true}
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": null}
    When I call "session::store::get-active-leaf" with {"session_id": "ghost"}
    Then the response is {"entry_id": null}

  # Prevents: commit-append trusting a stale parent, not counting, not moving the leaf, or firing events.
  Scenario: commit-append parents an implicit entry on the current leaf and commits it
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": false,
       "entry": {"kind": "message", "id": "e2", "parent_id": "stale", "timestamp": 1000500,
         "revision": 0, "message": {"role": "assistant", "content": [], "stop_reason": "end",
           "model": "m", "provider": "p", "timestamp": 2}}}
      """
    Then the response is:
      """
      {"committed": true,
       "entry": {"kind": "message", "id": "e2", "parent_id": "e1", "timestamp": 1000500,
         "revision": 0, "message": {"role": "assistant", "content": [], "stop_reason": "end",
           "model": "m", "provider": "p", "timestamp": 2}},
       "meta": {"session_id": "s1", "title": "", "description": "", "status": "idle",
         "kind": "user", "created_at": 1000000, "updated_at": 1000500, "message_count": 2}}
      """
    And no events fired
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": "e2"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e1, e2"

  # Prevents: a replayed commit overwriting the stored entry, re-counting it or moving the leaf.
  Scenario: committing an already committed id answers committed false with the stored entry
    Given a session "s1"
    And "s1" has entries:
      | id | role | text  |
      | e1 | user | first |
      | e2 | user | second |
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": true,
       "entry": {"kind": "message", "id": "e1", "parent_id": "e2", "timestamp": 9,
         "revision": 0, "message": {"role": "user", "content": [], "timestamp": 9}}}
      """
    Then the response contains {"committed": false, "entry": {"id": "e1", "parent_id": null, "timestamp": 1000000, "message": {"role": "user", "content": [{"type": "text", "text": "first"}], "timestamp": 1}}}
    And the response field "meta.message_count" is 2
    And no events fired
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": "e2"}

  # Prevents: committing under a parent that does not exist (a dangling chain) instead of a storage error.
  Scenario: an explicit parent that does not exist is a storage error and nothing is written
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": true,
       "entry": {"kind": "message", "id": "e2", "parent_id": "nope", "timestamp": 5,
         "revision": 0, "message": {"role": "user", "content": [], "timestamp": 5}}}
      """
    Then the call fails with "session/storage"
    And no events fired
    When I call "session::store::list-entries" with {"session_id": "s1"}
    Then the "id" values at "entries" are in any order "e1"
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": "e1"}
    When I call "session::store::get-meta" with {"session_id": "s1"}
    Then the response field "message_count" is 1

  # Prevents: an explicit parent being overridden by the leaf, or the leaf not following the new branch.
  Scenario: an explicit existing parent is kept and the leaf moves to the new entry
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | user      | q    |
      | e2 | assistant | a    |
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": true,
       "entry": {"kind": "message", "id": "e3", "parent_id": "e1", "timestamp": 1000001,
         "revision": 0, "message": {"role": "user", "content": [], "timestamp": 5}}}
      """
    Then the response field "committed" is true
    And the response field "entry.parent_id" is "e1"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e1, e3"

  # Prevents: committing into a session with no meta (creating a headless session) instead of failing.
  Scenario: commit-append without a session meta is a storage error
    When I call "session::store::commit-append" with:
      """
      {"session_id": "ghost", "parent_explicit": false,
       "entry": {"kind": "message", "id": "e1", "parent_id": null, "timestamp": 5,
         "revision": 0, "message": {"role": "user", "content": [], "timestamp": 5}}}
      """
    Then the call fails with "session/storage"
    And no events fired
    When I call "session::store::list-entries" with {"session_id": "ghost"}
    Then the response is {"entries": []}

  # Prevents: custom entries being counted as messages by the commit (updated_at still follows the entry).
  Scenario: committing a custom entry bumps updated_at but not message_count
    Given a session "s1"
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": false,
       "entry": {"kind": "custom", "id": "c1", "parent_id": null, "timestamp": 1000077,
         "revision": 0, "custom_type": "compaction", "data": {"n": 1}}}
      """
    Then the response contains {"committed": true, "meta": {"message_count": 0, "updated_at": 1000077}}
    And the response field "entry.data" is {"n": 1}
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": "c1"}

  # Prevents: a half-written append (entry stored, never committed) being duplicated or left uncommitted on retry.
  Scenario: an entry stored but not committed is completed by commit-append with the stored content
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    And I called "session::store::put-entry" with:
      """
      {"session_id": "s1", "entry": {"kind": "message", "id": "e2", "parent_id": "e1",
        "timestamp": 1000003, "revision": 0,
        "message": {"role": "user", "content": [{"type": "text", "text": "stored"}], "timestamp": 1}}}
      """
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": false,
       "entry": {"kind": "message", "id": "e2", "parent_id": null, "timestamp": 1000009,
         "revision": 0, "message": {"role": "user", "content": [{"type": "text", "text": "retry"}], "timestamp": 1}}}
      """
    Then the response contains {"committed": true, "entry": {"id": "e2", "parent_id": "e1", "timestamp": 1000003, "message": {"content": [{"type": "text", "text": "stored"}]}}, "meta": {"message_count": 2, "updated_at": 1000003}}
    When I call "session::store::commit-append" with:
      """
      {"session_id": "s1", "parent_explicit": false,
       "entry": {"kind": "message", "id": "e2", "parent_id": null, "timestamp": 1000009,
         "revision": 0, "message": {"role": "user", "content": [], "timestamp": 1}}}
      """
    Then the response field "committed" is false
    And the response field "meta.message_count" is 2

  # Prevents: the raw attachment functions re-deriving metadata, or deletes misreporting what existed.
  Scenario: put/get/list/delete-attachment(s) store raw attachments
    When I call "session::store::put-attachment" with:
      """
      {"meta": {"attachment_id": "a_x", "session_id": "s1", "name": " raw ", "mime": "",
        "size": 99, "sha256": "not-checked", "created_at": 3}, "data": "aGVsbG8="}
      """
    Then the response is {"ok": true}
    And no events fired
    When I call "session::store::get-attachment" with {"session_id": "s1", "attachment_id": "a_x"}
    Then the response is:
      """
      {"meta": {"attachment_id": "a_x", "session_id": "s1", "name": " raw ", "mime": "",
        "size": 99, "sha256": "not-checked", "created_at": 3}, "data": "aGVsbG8="}
      """
    When I call "session::store::get-attachment" with {"session_id": "s1", "attachment_id": "a_404"}
    Then the response is null
    Given I called "session::store::put-attachment" with {"meta": {"attachment_id": "a_y", "session_id": "s1", "name": "y", "mime": "text/plain", "size": 0, "sha256": "", "created_at": 1}, "data": ""}
    When I call "session::store::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are in any order "a_x, a_y"
    When I call "session::store::delete-attachment" with {"session_id": "s1", "attachment_id": "a_x"}
    Then the response is {"deleted": true}
    When I call "session::store::delete-attachment" with {"session_id": "s1", "attachment_id": "a_x"}
    Then the response is {"deleted": false}
    When I call "session::store::delete-attachments" with {"session_id": "s1"}
    Then the response is {"ok": true}
    And no events fired
    When I call "session::store::list-attachments" with {"session_id": "s1"}
    Then the response is {"attachments": []}
    When I call "session::store::delete-attachments" with {"session_id": "ghost"}
    Then the response is {"ok": true}

  # Prevents: undecodable bytes being stored (or stored empty) instead of rejected.
  Scenario: put-attachment with bad base64 is an invalid request and nothing is stored
    When I call "session::store::put-attachment" with {"meta": {"attachment_id": "a_x", "session_id": "s1", "name": "x", "mime": "text/plain", "size": 1, "sha256": "", "created_at": 1}, "data": "not base64!"}
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::store::list-attachments" with {"session_id": "s1"}
    Then the response is {"attachments": []}

  # Prevents: publish-events counting or re-emitting malformed envelopes, or losing session_metadata for filters.
  Scenario: publish-events re-emits only well-formed envelopes and counts them
    Given a binding "u1" on "session::status-changed" with config {"metadata": {"owner": "u1"}}
    And a binding "u2" on "session::status-changed" with config {"metadata": {"owner": "u2"}}
    And a binding "gone" on "session::deleted" with config {}
    When I call "session::store::publish-events" with:
      """
      {"events": [
        {"trigger_type": "session::status-changed", "session_metadata": {"owner": "u1"},
         "payload": {"session_id": "s9", "status": "working", "previous_status": "idle",
                     "status_reason": "r", "timestamp": 42}},
        {"trigger_type": "session::exploded", "payload": {"session_id": "s9"}},
        {"trigger_type": "session::created", "payload": {"session_id": "s9"}},
        {"trigger_type": "session::message-added",
         "payload": {"session_id": "s9", "entry_id": "e1", "parent_id": null, "timestamp": 1,
                     "message": {"role": "user", "content": [], "timestamp": 1},
                     "custom": {"custom_type": "x", "data": null}}},
        {"trigger_type": "session::store::events", "payload": {}},
        {"trigger_type": "session::status-changed",
         "payload": {"session_id": "s9", "status": "waiting", "previous_status": "idle", "timestamp": 1}},
        {"trigger_type": "session::deleted", "payload": {"session_id": "s9", "timestamp": 43}}
      ]}
      """
    Then the response is {"published": 2}
    And the events fired are "session::status-changed, session::deleted"
    And event 1 is "session::status-changed" with {"session_id": "s9", "status": "working", "previous_status": "idle", "status_reason": "r", "timestamp": 42}
    And event 1 carries session metadata {"owner": "u1"}
    And event 2 is "session::deleted" with {"session_id": "s9", "timestamp": 43}
    And event 2 carries session metadata null
    And binding "u1" received 1 event
    And binding "u2" received nothing
    And binding "gone" received "session_id" values "s9"
    When I call "session::store::get-meta" with {"session_id": "s9"}
    Then the response is null

  # Prevents: an empty batch failing or inventing events.
  Scenario: publishing no envelopes publishes nothing
    When I call "session::store::publish-events" with {"events": []}
    Then the response is {"published": 0}
    And no events fired

  # Prevents: malformed protocol requests reaching the store instead of failing the shape check.
  Scenario Outline: malformed protocol requests are invalid requests
    When I call "<function>" with <request>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::store::list-metas"
    Then the response is {"metas": []}

    Examples:
      | function                        | request                                                                                                                 |
      | session::store::get-meta        | {}                                                                                                                      |
      | session::store::put-meta        | {"meta": {"session_id": "s1", "title": "", "description": "", "status": "waiting", "created_at": 1, "updated_at": 1, "message_count": 0}} |
      | session::store::commit-append   | {"session_id": "s1", "entry": {"kind": "message", "id": "e1", "parent_id": null, "timestamp": 1, "message": {"role": "user", "content": [], "timestamp": 1}}} |
      | session::store::publish-events  | {}                                                                                                                      |
      | session::store::set-active-leaf | {"session_id": "s1"}                                                                                                    |
