@pure
Feature: hostile input
  Odd ids, oversized and over-deep payloads, bad base64, unknown enum values, wrong types, payloads
  that are not objects and function ids outside the catalog. Odd but legal ids are stored under
  exactly that id; everything else is refused with a session/* code before any write, fires
  nothing and leaves the store exactly as it was (README "Limits").

  Background:
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role      | text  |
      | u1 | user      | hello |
      | a1 | assistant | hi    |

  # Prevents: ids being normalized, decoded or path-interpreted, so two ids alias one session.
  Scenario Outline: odd ids are stored and read back under exactly that id
    When I call "session::ensure" with {"session_id": <id>}
    Then the call succeeds
    When I call "session::get" with {"session_id": <id>}
    Then the response field "meta.session_id" is <id>
    When I call "session::get" with {"session_id": <alias>}
    Then the response is null
    When I call "session::append" with {"session_id": <id>, "entry_id": <id>, "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response field "entry_id" is <id>

    Examples:
      | id                      | alias                         |
      | "../escape/chat 42:?"   | "..%2Fescape%2Fchat%2042%3A%3F" |
      | ".."                    | "%2E%2E"                      |
      | "."                     | "%2E"                         |
      | "a/b"                   | "a%2Fb"                       |
      | "%"                     | "%25"                         |
      | "%2F"                   | "/"                           |
      | "nul\\u0000byte"         | "nul"                         |
      | "ünïcødé 🦀"             | "%C3%BCn%C3%AFc%C3%B8d%C3%A9" |
      | "\\u202Eright-to-left"   | "right-to-left"               |

  # Prevents: a hostile id reaching a write path for a session that does not exist.
  Scenario Outline: mutations of unknown odd ids are not_found and change nothing
    Given the store is remembered
    When I call "<function>" with {"session_id": "../s1", "entry_id": "u1", "title": "x", "status": "done", "content": [], "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the call fails with "session/not_found"
    And no events fired
    And the store is as remembered

    Examples:
      | function                |
      | session::set-meta       |
      | session::set-status     |
      | session::append         |
      | session::fork           |
      | session::set-active-leaf |
      | session::update-message |

  # Prevents: 64 KB ids becoming file names the fs store cannot create, or unbounded keys in memory.
  Scenario Outline: ids longer than 200 bytes once file-name encoded are refused
    Given the store is remembered
    When I call "<function>" with {"session_id": "s1", "entry_ids": ["u1"], "message": {"role": "user", "content": [], "timestamp": 1}} and "<field>" set to <times> times "<unit>"
    Then the call fails with "session/invalid_request"
    And the error message contains "is too long"
    And no events fired
    And the store is as remembered

    Examples:
      | function                      | field           | times | unit |
      | session::ensure               | session_id      | 65536 | a    |
      | session::ensure               | session_id      | 201   | a    |
      | session::ensure               | session_id      | 67    | /    |
      | session::ensure               | session_id      | 34    | é    |
      | session::append               | entry_id        | 65536 | x    |
      | session::append               | parent_id       | 65536 | x    |
      | session::get                  | session_id      | 65536 | a    |
      | session::messages-range       | entry_ids.0     | 65536 | a    |
      | session::store::put-meta      | meta.session_id | 65536 | a    |
      | session::store::put-entry     | entry.id        | 65536 | a    |

  # Prevents: the id limit being off by one (200 encoded bytes are accepted).
  Scenario: an id of exactly 200 encoded bytes is accepted
    When I call "session::ensure" with {} and "session_id" set to 200 times "a"
    Then the call succeeds
    When I call "session::ensure" with {} and "session_id" set to 66 times "/"
    Then the call succeeds
    When I call "session::list"
    Then the response field "sessions" has 3 items

  # Prevents: deep JSON recursing through serde (or drop) until the stack overflows.
  Scenario Outline: payloads nested 10 000 levels deep are refused before decoding
    Given the store is remembered
    When I call "<function>" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "function_call", "id": "c", "function_id": "f"}], "timestamp": 1}} and "<field>" nested 10000 levels deep
    Then the call fails with "session/invalid_request"
    And the error message contains "nests deeper than 64 levels"
    And no events fired
    And the store is as remembered

    Examples:
      | function              | field                        |
      | session::ensure       | metadata                     |
      | session::set-meta     | metadata                     |
      | session::append       | origin                       |
      | session::append       | message.content.0.arguments  |
      | session::list         | metadata                     |
      | session::get          | anything                     |
      | session::store::put-meta | meta.metadata             |

  # Prevents: a deep non-object payload slipping past the depth check on its way to the shape error.
  Scenario: an array nested 10 000 levels deep is refused
    Given the store is remembered
    When I call "session::append" with an array nested 10000 levels deep
    Then the call fails with "session/invalid_request"
    And the store is as remembered

  # Prevents: the depth limit being off by one: 64 levels (the request object counts) pass.
  Scenario: a request exactly 64 levels deep is accepted, 65 is refused
    When I call "session::set-meta" with {"session_id": "s1"} and "metadata" nested 63 levels deep
    Then the call succeeds
    Given the store is remembered
    When I call "session::set-meta" with {"session_id": "s1"} and "metadata" nested 64 levels deep
    Then the call fails with "session/invalid_request"
    And the store is as remembered

  # Prevents: unbounded strings turning into one huge log line and event.
  Scenario Outline: requests larger than 32 MiB are refused
    Given the store is remembered
    When I call "<function>" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "text", "text": ""}], "timestamp": 1}} and "<field>" set to 33554432 times "x"
    Then the call fails with "session/invalid_request"
    And the error message contains "request is larger than 33554432 bytes"
    And no events fired
    And the store is as remembered

    Examples:
      | function              | field                  |
      | session::set-meta     | title                  |
      | session::append       | message.content.0.text |

  # Prevents: the size limit biting ordinary large content (1 MiB of text is stored as sent).
  Scenario: a 1 MiB message is accepted
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "text", "text": ""}], "timestamp": 1}} and "message.content.0.text" set to 1048576 times "x"
    Then the call succeeds

  # Prevents: malformed base64 being stored as bytes, or failing outside the session/* codes.
  Scenario Outline: invalid base64 is refused and stores nothing
    Given the store is remembered
    When I call "<function>" with <payload>
    Then the call fails with "session/invalid_request"
    And no events fired
    And the store is as remembered

    Examples:
      | function                      | payload                                                                      |
      | session::put-attachment       | {"session_id": "s1", "name": "n", "mime": "", "data": "not base64!"}         |
      | session::put-attachment       | {"session_id": "s1", "name": "n", "mime": "", "data": "YQ"}                  |
      | session::put-attachment       | {"session_id": "s1", "name": "n", "mime": "", "data": "YQ==="}               |
      | session::put-attachment       | {"session_id": "s1", "name": "n", "mime": "", "data": "\\u0000\\u0000\\u0000\\u0000"} |
      | session::store::put-attachment | {"meta": {"attachment_id": "a", "session_id": "s1", "name": "n", "mime": "m", "size": 1, "sha256": "", "created_at": 1}, "data": "%%%%"} |

  # Prevents: an upload over max_attachment_bytes being stored, or the check running after the write.
  Scenario: an attachment over the limit is refused and stores nothing
    Given the max attachment size is 4 bytes
    And the store is remembered
    When I call "session::put-attachment" with {"session_id": "s1", "name": "n", "mime": "", "data": "aGVsbG8="}
    Then the call fails with "session/attachment_too_large"
    And the store is as remembered

  # Prevents: an enum value outside the closed set being stored or defaulted.
  Scenario Outline: unknown enum values are refused
    Given the store is remembered
    When I call "<function>" with <payload>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    And the store is as remembered

    Examples:
      | function              | payload                                                                                           |
      | session::set-status   | {"session_id": "s1", "status": "paused"}                                                          |
      | session::list         | {"status": "bogus"}                                                                               |
      | session::list         | {"order": "random"}                                                                               |
      | session::list         | {"kinds": ["robot"]}                                                                              |
      | session::ensure       | {"session_id": "s2", "kind": "robot"}                                                             |
      | session::append       | {"session_id": "s1", "message": {"role": "robot", "content": [], "timestamp": 1}}                 |
      | session::append       | {"session_id": "s1", "message": {"role": "user", "content": [{"type": "video"}], "timestamp": 1}} |
      | session::append       | {"session_id": "s1", "message": {"role": "assistant", "content": [], "stop_reason": "bored", "model": "m", "provider": "p", "timestamp": 1}} |
      | session::messages     | {"session_id": "s1", "roles": ["narrator"]}                                                       |

  # Prevents: wrong JSON types being coerced (strings to numbers, negatives to huge limits, …).
  Scenario Outline: wrong types are refused
    Given the store is remembered
    When I call "<function>" with <payload>
    Then the call fails with "session/invalid_request"
    And no events fired
    And the store is as remembered

    Examples:
      | function                | payload                                                                         |
      | session::get            | {"session_id": 42}                                                              |
      | session::ensure         | {"session_id": null}                                                            |
      | session::ensure         | {"session_id": ["s1"]}                                                          |
      | session::set-meta       | {"session_id": "s1", "title": {"t": 1}}                                         |
      | session::set-meta       | {"session_id": "s1", "metadata": "owner=u2"}                                    |
      | session::list           | {"limit": "ten"}                                                                |
      | session::list           | {"limit": -1}                                                                   |
      | session::list           | {"limit": 1.5}                                                                  |
      | session::append         | {"session_id": "s1", "message": "hello"}                                        |
      | session::append         | {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": "now"}} |
      | session::append         | {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 9223372036854775808}} |
      | session::update-message | {"session_id": "s1", "entry_id": "u1", "content": [], "expected_revision": "0"} |
      | session::set-draft      | {"session_id": "s1", "attachment_ids": "a_001"}                                 |

  # Prevents: serde filling a request struct from an array by position, or a scalar reaching logic.
  Scenario Outline: payloads that are not objects are refused
    Given the store is remembered
    When I call "<function>" with the non-object <payload>
    Then the call fails with "session/invalid_request"
    And the error message contains "expected a JSON object"
    And the store is as remembered

    Examples:
      | function          | payload                  |
      | session::ensure   | ["s2"]                   |
      | session::delete   | ["s1"]                   |
      | session::set-meta | "s1"                     |
      | session::list     | 42                       |
      | session::get      | true                     |

  # Prevents: a caller naming a function outside the catalog getting anything but a session/* error.
  Scenario Outline: function ids outside the catalog are invalid requests
    Given the store is remembered
    When I call the unknown function "<function>" with {"session_id": "s1"}
    Then the call fails with "session/invalid_request"
    And the error message contains "unknown function"
    And the store is as remembered

    Examples:
      | function                  |
      | session::nope             |
      |                           |
      | session::store::drop-all  |
      | SESSION::DELETE           |
      | session::delete\\u0000     |

  # Prevents: a 64 KB function id echoed whole into the error message.
  Scenario: a 64 KB function id is refused with a short message
    When I call the unknown function of 65536 times "x"
    Then the call fails with "session/invalid_request"
    And the error message contains "unknown function xxxx"

  # Prevents: a cursor of any length or content failing outside session/invalid_cursor.
  Scenario Outline: hostile cursors are invalid cursors
    Given the store is remembered
    When I call "<function>" with {"session_id": "s1", "entry_ids": ["u1", "a1"], "limit": 1} and "cursor" set to <times> times "<unit>"
    Then the call fails with "session/invalid_cursor"
    And the store is as remembered

    Examples:
      | function                | times | unit |
      | session::list           | 5000  | A    |
      | session::list           | 1     | !!!! |
      | session::list           | 1     | eyJvIjoiY3JlYXRlZF9kZXNjIiwiayI6IngiLCJpZCI6MX0= |
      | session::messages       | 1     | e30= |
      | session::messages       | 1     | eyJpZCI6Ii4uLy4uL2V0Yy9wYXNzd2QifQ== |
      | session::messages-range | 1     | W10= |
      | session::messages-range | 4096  | ==== |

  # Prevents: a caller's unknown leaf reaching operators as session/storage (their alert code).
  Scenario Outline: a path window from a leaf that is no entry is entry_not_found
    Given the store is remembered
    When I call "<function>" with {"session_id": "s1", "leaf": "no-such-entry", "classes": ["user"], "from": 0, "backward": false, "limit": 5}
    Then the call fails with "session/entry_not_found"
    And no events fired
    And the store is as remembered

    Examples:
      | function                      |
      | session::store::path-locate   |
      | session::store::path-select   |
