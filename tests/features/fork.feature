@pure
Feature: session::fork
  The root → entry path of a source session is copied into a new, independent session: fresh
  ids in path order, original timestamps, revisions reset, bookkeeping anchors remapped, referenced
  attachments copied. Only session::created fires, for the new session.

  # Prevents: a fork that shares ids with the source, restamps entries, or misses the inherited meta.
  Scenario: a fork copies the path with fresh ids, original timestamps and inherited meta
    Given I called "session::ensure" with {"session_id": "s1", "title": "T", "description": "D", "kind": "automation", "metadata": {"owner": "u1"}}
    And "s1" has entries:
      | id | role | text | origin      |
      | u1 | user | q    | {"turn": 1} |
    And the clock advances by 10 ms
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | a    |
    And the clock advances by 10 ms
    And "s1" has entries:
      | id | role | text |
      | u2 | user | q2   |
    And the clock is at 2000000
    When I call "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is:
      """
      {"session_id": "s_001", "meta": {"session_id": "s_001", "title": "T", "description": "D", "status": "idle",
        "kind": "automation", "metadata": {"owner": "u1"}, "forked_from": "s1",
        "created_at": 2000000, "updated_at": 2000000, "message_count": 2}}
      """
    And the events fired are "session::created"
    And event 1 is "session::created" with {"session_id": "s_001", "title": "T", "description": "D", "status": "idle", "forked_from": "s1", "created_at": 2000000}
    And event 1 carries session metadata {"owner": "u1"}
    And no "session::message-added" event fired
    When I call "session::messages" with {"session_id": "s_001"}
    Then the response ids at "messages" are "e_001, e_002"
    When I call "session::get-message" with {"session_id": "s_001", "entry_id": "e_001"}
    Then the response is {"entry": {"kind": "message", "id": "e_001", "parent_id": null, "timestamp": 1000000, "revision": 0, "origin": {"turn": 1}, "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}}}
    When I call "session::get-message" with {"session_id": "s_001", "entry_id": "e_002"}
    Then the response is {"entry": {"kind": "message", "id": "e_002", "parent_id": "e_001", "timestamp": 1000010, "revision": 0, "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}}
    When I call "session::get-message" with {"session_id": "s_001", "entry_id": "u1"}
    Then the response is null

  # Prevents: the fork leaf pointing at the source's active leaf instead of the fork point's copy.
  Scenario: the copy of the fork point becomes the new leaf and later appends chain from it
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
    When I call "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    And I call "session::append" with {"session_id": "s_001", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response is {"entry_id": "e_003", "parent_id": "e_002", "timestamp": 1000000}
    When I call "session::messages-tail" with {"session_id": "s_001"}
    Then the response ids at "messages" are "e_001, e_002, e_003"

  # Prevents: copying the active path instead of the fork point's own chain (fork from an abandoned branch).
  Scenario: forking from an abandoned branch copies that branch
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | parent |
      | u1 | user      | q    |        |
      | a1 | assistant | a    |        |
      | b1 | assistant | b    | u1     |
      | b2 | user      | c    |        |
    When I call "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "meta.message_count" is 2
    When I call "session::messages" with {"session_id": "s_001"}
    Then the response field "messages" has 2 items
    And the response field "messages.1.message.content" is [{"type": "text", "text": "a"}]

  # Prevents: revisions being carried over (the copy must start at 0 with the latest content).
  Scenario: revisions are reset while the updated content is copied
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | v0   |
    And I called "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "v1"}]}
    And I called "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "v2"}]}
    When I call "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    And I call "session::get-message" with {"session_id": "s_001", "entry_id": "e_001"}
    Then the response field "entry.revision" is 0
    And the response field "entry.message.content" is [{"type": "text", "text": "v2"}]
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.revision" is 2

  # Prevents: bookkeeping anchors left pointing at source ids, over-eager rewriting, or nulling unknown anchors.
  Scenario: custom entries are copied and compaction / message_order anchors are remapped
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | parent |
      | b9 | user      | off  |        |
      | u1 | user      | q    | b9     |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "b9"}
    And I called "session::append" with {"session_id": "s1", "entry_id": "r0", "parent_id": "b9", "message": {"role": "user", "content": [], "timestamp": 1}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k1", "origin": {"by": "h"}, "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": "a1", "summary": "a1"}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k2", "custom": {"custom_type": "message_order", "data": {"after": "r0", "moved": ["a1", "u2", "zz", 5], "note": "a1"}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k3", "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": "u1"}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k4", "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": 42}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k5", "custom": {"custom_type": "bookmark", "data": {"tail_start_entry_id": "a1", "after": "a1"}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "k6", "custom": {"custom_type": "message_order", "data": {"after": null, "moved": "a1"}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "u2", "message": {"role": "user", "content": [], "timestamp": 1}}
    When I call "session::fork" with {"session_id": "s1", "entry_id": "u2"}
    Then the response field "meta.message_count" is 4
    And the events fired are "session::created"
    When I call "session::messages" with {"session_id": "s_001", "include_custom": true}
    Then the response is:
      """
      {"messages": [
        {"entry_id": "e_001", "message": {"role": "user", "content": [{"type": "text", "text": "off"}], "timestamp": 1}},
        {"entry_id": "e_002", "message": {"role": "user", "content": [], "timestamp": 1}},
        {"entry_id": "e_003", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "e_004", "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": "e_003", "summary": "a1"}}},
        {"entry_id": "e_005", "custom": {"custom_type": "message_order", "data": {"after": "e_002", "moved": ["e_003", "e_010", "zz", 5], "note": "a1"}}},
        {"entry_id": "e_006", "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": "u1"}}},
        {"entry_id": "e_007", "custom": {"custom_type": "compaction", "data": {"tail_start_entry_id": 42}}},
        {"entry_id": "e_008", "custom": {"custom_type": "bookmark", "data": {"tail_start_entry_id": "a1", "after": "a1"}}},
        {"entry_id": "e_009", "custom": {"custom_type": "message_order", "data": {"after": null, "moved": "a1"}}},
        {"entry_id": "e_010", "message": {"role": "user", "content": [], "timestamp": 1}}]}
      """
    When I call "session::get-message" with {"session_id": "s_001", "entry_id": "e_004"}
    Then the response is {"entry": {"kind": "custom", "id": "e_004", "parent_id": "e_003", "timestamp": 1000000, "revision": 0, "origin": {"by": "h"}, "custom_type": "compaction", "data": {"tail_start_entry_id": "e_003", "summary": "a1"}}}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "k1"}
    Then the response field "entry.data" is {"tail_start_entry_id": "a1", "summary": "a1"}

  # Prevents: attachments left behind (dangling file blocks), copied under new ids, or unreferenced/draft uploads copied.
  Scenario: attachments referenced on the path are copied under the same ids; others and the draft are not
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "img.png", "mime": "image/png", "data": "d29ybGQ="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "u.bin", "mime": "", "data": "aW1nIQ=="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.bin", "mime": "", "data": "aW1nIQ=="}
    And I called "session::append" with:
      """
      {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": "see"},
        {"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5},
        {"type": "file", "attachment_id": "a_missing", "name": "gone", "mime": "text/plain", "size": 1}]}}
      """
    And I called "session::append" with {"session_id": "s1", "entry_id": "k1", "custom": {"custom_type": "note", "data": {"type": "file", "attachment_id": "a_003"}}}
    And I called "session::append" with:
      """
      {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "stop_reason": "end", "model": "m",
        "provider": "p", "timestamp": 2, "content": [
          {"type": "function_result", "function_call_id": "c1", "content": [
            {"type": "image", "mime": "image/png", "data": "d29ybGQ=", "attachment_id": "a_002"}]},
          {"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5}]}}
      """
    And I called "session::append" with {"session_id": "s1", "entry_id": "b1", "parent_id": "u1", "message": {"role": "user", "timestamp": 1, "content": [{"type": "file", "attachment_id": "a_004", "name": "b.bin", "mime": "application/octet-stream", "size": 4}]}}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "typing", "attachment_ids": ["a_003"]}
    And the clock is at 2000000
    When I call "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "meta.message_count" is 2
    And the response field "meta.draft" does not exist
    And the response field "meta.draft_attachments" does not exist
    And the events fired are "session::created"
    When I call "session::list-attachments" with {"session_id": "s_001"}
    Then the response is:
      """
      {"attachments": [
        {"attachment_id": "a_001", "session_id": "s_001", "name": "a.txt", "mime": "text/plain", "size": 5,
         "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "created_at": 1000000},
        {"attachment_id": "a_002", "session_id": "s_001", "name": "img.png", "mime": "image/png", "size": 5,
         "sha256": "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7", "created_at": 1000000}]}
      """
    When I call "session::get-attachment" with {"session_id": "s_001", "attachment_id": "a_002"}
    Then the response field "data" is "d29ybGQ="
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_001, a_002, a_003, a_004"
    And the response field "attachments.0.session_id" is "s1"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" is "typing"

  # Prevents: the source being modified by the fork (leaf, updated_at, status, draft, entries).
  Scenario: the source is untouched and the fork starts idle without status reason or draft
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
    And I called "session::set-status" with {"session_id": "s1", "status": "working", "reason": "busy"}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "half"}
    And the clock advances by 100 ms
    When I call "session::fork" with {"session_id": "s1", "entry_id": "u1", "title": "Copy"}
    Then the response is {"session_id": "s_001", "meta": {"session_id": "s_001", "title": "Copy", "description": "", "status": "idle", "kind": "user", "forked_from": "s1", "created_at": 1000100, "updated_at": 1000100, "message_count": 1}}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is {"meta": {"session_id": "s1", "title": "", "description": "", "status": "working", "status_reason": "busy", "kind": "user", "draft": "half", "created_at": 1000000, "updated_at": 1000000, "message_count": 2}}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1"

  # Prevents: an explicit null title being stored instead of falling back to the source title.
  Scenario: a null title means the source title
    Given I called "session::ensure" with {"session_id": "s1", "title": "Original"}
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::fork" with {"session_id": "s1", "entry_id": "u1", "title": null}
    Then the response field "meta.title" is "Original"
    And event 1 is "session::created" containing {"title": "Original", "forked_from": "s1"}

  # Prevents: fork and source sharing state after the fork (appends, updates, deletes leaking across).
  Scenario: source and fork are fully independent afterwards
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
    And I called "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    When I call "session::update-message" with {"session_id": "s_001", "entry_id": "e_002", "content": [{"type": "text", "text": "changed"}]}
    Then event 1 is "session::message-updated" containing {"session_id": "s_001", "entry_id": "e_002"}
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    And I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "a"}]
    When I call "session::delete" with {"session_id": "s1"}
    And I call "session::messages" with {"session_id": "s_001"}
    Then the response ids at "messages" are "e_001, e_002"
    When I call "session::get" with {"session_id": "s_001"}
    Then the response contains {"meta": {"forked_from": "s1", "message_count": 2}}

  # Prevents: a fork of a fork recording the original source instead of its immediate source.
  Scenario: forking a fork records the immediate source and bindings see inherited metadata
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    And a binding "tenant" on "session::created" with config {"metadata": {"owner": "u1"}}
    When I call "session::fork" with {"session_id": "s1", "entry_id": "u1"}
    And I call "session::fork" with {"session_id": "s_001", "entry_id": "e_001"}
    Then the response contains {"session_id": "s_002", "meta": {"forked_from": "s_001", "metadata": {"owner": "u1"}}}
    And binding "tenant" received 2 events
    And binding "tenant" last received {"session_id": "s_002", "forked_from": "s_001"}

  # Prevents: an unknown fork point creating an empty session or firing created.
  Scenario: an unknown fork point is entry_not_found and creates nothing
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::fork" with {"session_id": "s1", "entry_id": "nope"}
    Then the call fails with "session/entry_not_found"
    And no events fired
    When I call "session::list"
    Then the response ids at "sessions" are "s1"

  # Prevents: forking an unknown source answering anything but not_found.
  Scenario: an unknown source is not_found
    When I call "session::fork" with {"session_id": "ghost", "entry_id": "u1"}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::list"
    Then the response is {"sessions": []}

  # Prevents: a fork's copied path, leaf or referenced attachments existing only until a restart.
  Scenario: a fork survives a restart and keeps chaining from the fork point's copy
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [{"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5}], "timestamp": 1}}
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
    And I called "session::fork" with {"session_id": "s1", "entry_id": "a1"}
    When the store restarts
    And I call "session::messages" with {"session_id": "s_001"}
    Then the response ids at "messages" are "e_001, e_002"
    When I call "session::get" with {"session_id": "s_001"}
    Then the response contains {"meta": {"message_count": 2, "forked_from": "s1"}}
    When I call "session::get-attachment" with {"session_id": "s_001", "attachment_id": "a_001"}
    Then the response field "data" is "aGVsbG8="
    When I call "session::append" with {"session_id": "s_001", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response field "parent_id" is "e_002"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1, u2"
