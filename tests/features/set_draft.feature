@pure
Feature: session::set-draft
  Unsent composer input parked on the session. Event-silent and updated_at-neutral: drafts are
  saved at keystroke cadence and must neither reorder list nor wake subscribers.

  # Prevents: a draft save firing an event or bumping updated_at (reordering the sidebar).
  Scenario: parking draft text is silent and leaves updated_at alone
    Given a session "old"
    And the clock advances by 10 ms
    And a session "new"
    And the clock advances by 10 ms
    When I call "session::set-draft" with {"session_id": "old", "draft": "half a thought"}
    Then the response is {"draft": "half a thought", "attachments": []}
    And no events fired
    When I call "session::get" with {"session_id": "old"}
    Then the response is:
      """
      {"meta": {"session_id": "old", "title": "", "description": "", "status": "idle",
        "kind": "user", "draft": "half a thought", "created_at": 1000000,
        "updated_at": 1000000, "message_count": 0}}
      """
    When I call "session::list"
    Then the response ids at "sessions" are "new, old"
    And the response field "sessions.1.draft" is "half a thought"

  # Prevents: trimming non-blank draft text, or keeping text that is only tabs/newlines.
  Scenario: non-blank text is stored exactly as given, any-whitespace text clears
    Given a session "s1"
    When I call "session::set-draft" with {"session_id": "s1", "draft": "  hi\n"}
    Then the response is {"draft": "  hi\n", "attachments": []}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" is "  hi\n"
    When I call "session::set-draft" with {"session_id": "s1", "draft": " \t\n "}
    Then the response is {"draft": null, "attachments": []}

  # Prevents: blank/omitted/null text being stored (or kept) instead of clearing the draft.
  Scenario Outline: blank, null or omitted text clears the stored draft
    Given a session "s1"
    And I called "session::set-draft" with {"session_id": "s1", "draft": "keep me?"}
    When I call "session::set-draft" with <request>
    Then the response is {"draft": null, "attachments": []}
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" does not exist

    Examples:
      | request                                    |
      | {"session_id": "s1", "draft": ""}          |
      | {"session_id": "s1", "draft": "    "}       |
      | {"session_id": "s1", "draft": null}        |
      | {"session_id": "s1"}                       |

  # Prevents: parked attachments losing request order or carrying caller data instead of the store's metadata.
  Scenario: attachment ids resolve to stored metadata in request order
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And the clock advances by 1 ms
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.bin", "mime": "", "data": "AAE="}
    When I call "session::set-draft" with {"session_id": "s1", "draft": "see files", "attachment_ids": ["a_002", "a_001"]}
    Then the response is:
      """
      {"draft": "see files", "attachments": [
        {"attachment_id": "a_002", "session_id": "s1", "name": "b.bin",
         "mime": "application/octet-stream", "size": 2,
         "sha256": "b413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2", "created_at": 1000001},
        {"attachment_id": "a_001", "session_id": "s1", "name": "a.txt", "mime": "text/plain",
         "size": 5, "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
         "created_at": 1000000}]}
      """
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the "attachment_id" values at "meta.draft_attachments" are "a_002, a_001"
    And the response field "meta.updated_at" is 1000000

  # Prevents: a repeated id parking the same attachment twice.
  Scenario: duplicate ids are dropped, first occurrence wins
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::set-draft" with {"session_id": "s1", "attachment_ids": ["a_002", "a_001", "a_002", "a_001"]}
    Then the "attachment_id" values at "attachments" are "a_002, a_001"
    And the response field "draft" is null
    When I call "session::get" with {"session_id": "s1"}
    Then the "attachment_id" values at "meta.draft_attachments" are "a_002, a_001"

  # Prevents: an unknown id being skipped or partially applied instead of rejecting the whole call.
  Scenario: an unknown attachment id is an invalid request and nothing is written
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "before", "attachment_ids": ["a_001"]}
    When I call "session::set-draft" with {"session_id": "s1", "draft": "after", "attachment_ids": ["a_001", "a_404"]}
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" is "before"
    And the "attachment_id" values at "meta.draft_attachments" are "a_001"

  # Prevents: resolving ids against another session's attachment store.
  Scenario: an attachment of another session is unknown here
    Given a session "s1"
    And a session "s2"
    And I called "session::put-attachment" with {"session_id": "s2", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::set-draft" with {"session_id": "s1", "attachment_ids": ["a_001"]}
    Then the call fails with "session/invalid_request"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft_attachments" does not exist

  # Prevents: a text-only save dropping parked attachments (omitted or null attachment_ids keep them).
  Scenario Outline: omitted or null attachment_ids keep the parked list
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "v1", "attachment_ids": ["a_001"]}
    When I call "session::set-draft" with <request>
    Then the response field "draft" is "v2"
    And the "attachment_id" values at "attachments" are "a_001"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" is "v2"
    And the "attachment_id" values at "meta.draft_attachments" are "a_001"

    Examples:
      | request                                                        |
      | {"session_id": "s1", "draft": "v2"}                            |
      | {"session_id": "s1", "draft": "v2", "attachment_ids": null}    |

  # Prevents: an empty list being stored as [] (or ignored) instead of clearing the parked attachments.
  Scenario: an empty attachment list clears the parked attachments
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "v1", "attachment_ids": ["a_001"]}
    When I call "session::set-draft" with {"session_id": "s1", "draft": "v1", "attachment_ids": []}
    Then the response is {"draft": "v1", "attachments": []}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft_attachments" does not exist
    And the response field "meta.draft" is "v1"
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_001"

  # Prevents: omitting draft while changing attachments keeping the old text (omission clears it).
  Scenario: changing only the attachments clears the text
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "typed"}
    When I call "session::set-draft" with {"session_id": "s1", "attachment_ids": ["a_001"]}
    Then the response field "draft" is null
    And the "attachment_id" values at "attachments" are "a_001"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.draft" does not exist
    And the "attachment_id" values at "meta.draft_attachments" are "a_001"

  # Prevents: set-draft on an unknown id creating a session or failing with the wrong code.
  Scenario: an unknown session is not_found
    When I call "session::set-draft" with {"session_id": "ghost", "draft": "x"}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null
