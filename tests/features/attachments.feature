@pure
Feature: session attachments (put / get / list / delete)
  Original bytes stored beside the transcript. All four functions are event-silent and never
  touch updated_at or message_count; a referenced attachment cannot be deleted.

  # Prevents: untrimmed names/mimes, a wrong sha256/size, or an upload bumping updated_at or firing.
  Scenario: put stores trimmed metadata with size and sha256 and returns the file block
    Given a session "s1"
    And the clock advances by 40 ms
    When I call "session::put-attachment" with {"session_id": "s1", "name": "  notes.txt  ", "mime": " text/plain ", "data": "aGVsbG8="}
    Then the response is:
      """
      {"attachment": {"attachment_id": "a_001", "session_id": "s1", "name": "notes.txt",
         "mime": "text/plain", "size": 5,
         "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
         "created_at": 1000040},
       "block": {"type": "file", "attachment_id": "a_001", "name": "notes.txt",
         "mime": "text/plain", "size": 5}}
      """
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.updated_at" is 1000000
    And the response field "meta.message_count" is 0
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is:
      """
      {"attachment": {"attachment_id": "a_001", "session_id": "s1", "name": "notes.txt",
         "mime": "text/plain", "size": 5,
         "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
         "created_at": 1000040},
       "data": "aGVsbG8="}
      """
    And no events fired

  # Prevents: a blank mime being stored as "" instead of application/octet-stream.
  Scenario Outline: a blank mime defaults to application/octet-stream
    Given a session "s1"
    When I call "session::put-attachment" with {"session_id": "s1", "name": "blob", "mime": <mime>, "data": "YWJjZA=="}
    Then the response field "attachment.mime" is "application/octet-stream"
    And the response field "block.mime" is "application/octet-stream"
    And the response field "attachment.sha256" is "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"
    And the response field "attachment.size" is 4

    Examples:
      | mime    |
      | ""      |
      | "   "   |

  # Prevents: checking the session before the payload (D10), or a failed upload leaving anything behind.
  Scenario Outline: shape and size are checked before the session, and nothing is written on failure
    Given a session "s1"
    And the max attachment size is 4 bytes
    When I call "session::put-attachment" with <request>
    Then the call fails with "<code>"
    And no events fired
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the response is {"attachments": []}
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

    Examples:
      | request                                                                              | code                          |
      | {"session_id": "ghost", "name": "   ", "mime": "text/plain", "data": "aGVsbG8="}     | session/invalid_request       |
      | {"session_id": "ghost", "name": "   ", "mime": "text/plain", "data": "%%%"}          | session/invalid_request       |
      | {"session_id": "ghost", "name": "a.txt", "mime": "text/plain", "data": "%%%"}        | session/invalid_request       |
      | {"session_id": "ghost", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}   | session/attachment_too_large  |
      | {"session_id": "ghost", "name": "a.txt", "mime": "text/plain", "data": "YWJjZA=="}   | session/not_found             |
      | {"session_id": "s1", "name": "", "mime": "text/plain", "data": "YWJjZA=="}           | session/invalid_request       |
      | {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8"}       | session/invalid_request       |
      | {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVs bG8="}     | session/invalid_request       |
      | {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}      | session/attachment_too_large  |
      | {"session_id": "s1", "name": "a.txt", "data": "YWJjZA=="}                            | session/invalid_request       |

  # Prevents: an off-by-one in the size limit rejecting an upload of exactly max_attachment_bytes.
  Scenario: an upload of exactly the maximum size is accepted
    Given a session "s1"
    And the max attachment size is 4 bytes
    When I call "session::put-attachment" with {"session_id": "s1", "name": "a", "mime": "text/plain", "data": "YWJjZA=="}
    Then the response field "attachment.size" is 4
    And no events fired

  # Prevents: include_data:false reading/returning bytes or omitting data instead of an explicit null.
  Scenario: include_data false gives metadata with data null; null means the default (true)
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001", "include_data": false}
    Then the response is:
      """
      {"attachment": {"attachment_id": "a_001", "session_id": "s1", "name": "a.txt",
         "mime": "text/plain", "size": 5,
         "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
         "created_at": 1000000},
       "data": null}
      """
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001", "include_data": null}
    Then the response field "data" is "aGVsbG8="
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001", "include_data": true}
    Then the response field "data" is "aGVsbG8="

  # Prevents: get-attachment erroring (not_found) on unknown ids instead of answering null.
  Scenario: unknown attachments and unknown sessions read as null
    Given a session "s1"
    And a session "s2"
    And I called "session::put-attachment" with {"session_id": "s2", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_404"}
    Then the response is null
    When I call "session::get-attachment" with {"session_id": "ghost", "attachment_id": "a_001"}
    Then the response is null
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is null
    And no events fired

  # Prevents: list-attachments ordered by id or insertion instead of (created_at, attachment_id).
  Scenario: attachments are listed by created_at, then attachment_id
    Given a session "s1"
    And the clock is at 2000000
    And I called "session::put-attachment" with {"session_id": "s1", "name": "late", "mime": "text/plain", "data": "aGVsbG8="}
    And the clock is at 1500000
    And I called "session::put-attachment" with {"session_id": "s1", "name": "early-1", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "early-2", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_002, a_003, a_001"
    And the "name" values at "attachments" are "early-1, early-2, late"
    And no events fired

  # Prevents: list-attachments answering [] for an unknown session instead of not_found.
  Scenario: listing the attachments of an unknown session is not_found
    When I call "session::list-attachments" with {"session_id": "ghost"}
    Then the call fails with "session/not_found"
    And no events fired

  # Prevents: delete-attachment firing, bumping updated_at, or answering true for an absent attachment.
  Scenario: deleting an unreferenced attachment is silent and answers whether it existed
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And the clock advances by 20 ms
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is {"deleted": true}
    And no events fired
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is null
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_002"
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is {"deleted": false}
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.updated_at" is 1000000

  # Prevents: delete-attachment on an unknown session answering {deleted:false} instead of not_found.
  Scenario: deleting from an unknown session is not_found
    When I call "session::delete-attachment" with {"session_id": "ghost", "attachment_id": "a_001"}
    Then the call fails with "session/not_found"
    And no events fired

  # Prevents: deleting bytes a transcript still references (file block, linked image, nested result, custom message).
  Scenario Outline: an attachment referenced by a message is in use and kept
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.png", "mime": "image/png", "data": "aGVsbG8="}
    And I called "session::append" with {"session_id": "s1", "message": <message>}
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the call fails with "session/attachment_in_use"
    And no events fired
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001", "include_data": false}
    Then the response field "attachment.attachment_id" is "a_001"

    Examples:
      | message |
      | {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "file", "attachment_id": "a_001", "name": "a.png", "mime": "image/png", "size": 5}], "timestamp": 1} |
      | {"role": "user", "content": [{"type": "image", "mime": "image/png", "data": "aGVsbG8=", "attachment_id": "a_001"}], "timestamp": 1} |
      | {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [{"type": "function_result", "function_call_id": "c1", "content": [{"type": "function_result", "function_call_id": "c0", "content": [{"type": "file", "attachment_id": "a_001", "name": "a.png", "mime": "image/png", "size": 5}]}]}], "timestamp": 3} |
      | {"role": "custom", "custom_type": "upload", "content": [{"type": "file", "attachment_id": "a_001", "name": "a.png", "mime": "image/png", "size": 5}], "timestamp": 4} |
      | {"role": "assistant", "content": [{"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_001"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2} |

  # Prevents: the in-use scan looking only at the active path (a branch switch must not free referenced bytes).
  Scenario: a reference on an inactive branch still blocks deletion
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And "s1" has entries:
      | id | role | text |
      | e1 | user | root |
    And I called "session::append" with:
      """
      {"session_id": "s1", "entry_id": "e2", "parent_id": "e1",
       "message": {"role": "user", "content": [{"type": "file", "attachment_id": "a_001",
         "name": "a.txt", "mime": "text/plain", "size": 5}], "timestamp": 1}}
      """
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "e1"}
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the call fails with "session/attachment_in_use"
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_001"

  # Prevents: custom entries (bookkeeping) or unlinked images being treated as references.
  Scenario: custom entries and unlinked images do not hold an attachment
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::append" with {"session_id": "s1", "custom": {"custom_type": "note", "data": {"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5}}}
    And I called "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "image", "mime": "image/png", "data": "aGVsbG8="}, {"type": "text", "text": "a_001"}], "timestamp": 1}}
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is {"deleted": true}
    And no events fired

  # Prevents: a deleted attachment lingering in draft_attachments, an emptied list stored as [], or a bumped updated_at.
  Scenario: deleting a parked attachment removes it from the draft
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "two files", "attachment_ids": ["a_001", "a_002"]}
    And the clock advances by 60 ms
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is {"deleted": true}
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the "attachment_id" values at "meta.draft_attachments" are "a_002"
    And the response field "meta.draft" is "two files"
    And the response field "meta.updated_at" is 1000000
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_002"}
    Then the response is {"deleted": true}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "", "description": "", "status": "idle",
        "kind": "user", "draft": "two files", "created_at": 1000000, "updated_at": 1000000,
        "message_count": 0}}
      """

  # Prevents: bytes, metadata or a deletion not surviving a restart, or the in-use guard forgetting references.
  Scenario: attachments, a deletion and the in-use guard survive a restart
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "b.txt", "mime": "text/plain", "data": "d29ybGQ="}
    And I called "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5}], "timestamp": 1}}
    And I called "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_002"}
    When the store restarts
    And I call "session::list-attachments" with {"session_id": "s1"}
    Then the "attachment_id" values at "attachments" are "a_001"
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response field "data" is "aGVsbG8="
    And the response field "attachment.sha256" is "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    When I call "session::delete-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the call fails with "session/attachment_in_use"
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_002"}
    Then the response is null
