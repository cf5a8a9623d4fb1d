@pure
Feature: session::list
  Filter, order and page every session's meta. Pages are gapless under timestamp ties because
  every order breaks ties by session_id.

  # Prevents: an empty store answering with a next_cursor or null instead of an empty page.
  Scenario: listing an empty store gives an empty page without a cursor
    When I call "session::list"
    Then the response is {"sessions": []}
    And no events fired

  # Prevents: the default order being created-based instead of updated_desc (recent activity first).
  Scenario: the default order is most recently updated first
    Given a session "a"
    And the clock advances by 10 ms
    And a session "b"
    And the clock advances by 10 ms
    And a session "c"
    And the clock advances by 10 ms
    And I called "session::set-meta" with {"session_id": "a", "title": "bumped"}
    When I call "session::list"
    Then the response ids at "sessions" are "a, c, b"
    And the response field "next_cursor" does not exist
    And no events fired

  # Prevents: ties on the sort key left in store order, or descending orders breaking ties ascending.
  Scenario Outline: every order breaks timestamp ties by session_id
    Given a session "b"
    And a session "c"
    And a session "a"
    And the clock advances by 5 ms
    And a session "d"
    And the clock advances by 5 ms
    And I called "session::set-meta" with {"session_id": "a", "title": "bumped"}
    When I call "session::list" with {"order": "<order>"}
    Then the response ids at "sessions" are "<ids>"

    Examples:
      | order        | ids        |
      | created_asc  | a, b, c, d |
      | created_desc | d, c, b, a |
      | updated_desc | a, d, c, b |

  # Prevents: the status filter being ignored or matching on a different field.
  Scenario: status filters by equality
    Given a session "s1"
    And a session "s2"
    And a session "s3"
    And I called "session::set-status" with {"session_id": "s2", "status": "working"}
    And I called "session::set-status" with {"session_id": "s3", "status": "error", "reason": "x"}
    When I call "session::list" with {"status": "working"}
    Then the response ids at "sessions" are "s2"
    When I call "session::list" with {"status": "idle"}
    Then the response ids at "sessions" are "s1"

  # Prevents: kinds membership ignored, or an empty kinds list treated as "no filter".
  Scenario: kinds filters by membership and an empty kinds list matches nothing
    Given I called "session::ensure" with {"session_id": "k-user"}
    And I called "session::ensure" with {"session_id": "k-auto", "kind": "automation"}
    And I called "session::ensure" with {"session_id": "k-e2e", "kind": "e2e"}
    When I call "session::list" with {"kinds": ["automation", "e2e"], "order": "created_asc"}
    Then the response ids at "sessions" are "k-auto, k-e2e"
    When I call "session::list" with {"kinds": ["user"]}
    Then the response ids at "sessions" are "k-user"
    When I call "session::list" with {"kinds": []}
    Then the response is {"sessions": []}

  # Prevents: metadata filters doing prefix/partial array matches or matching sessions without metadata.
  Scenario: metadata filters by subset with deep equality
    Given a session "m1" with metadata {"owner": "u1", "team": "x"}
    And a session "m2" with metadata {"owner": "u2"}
    And a session "m3"
    And a session "m4" with metadata {"owner": "u1", "tags": ["a", "b"]}
    When I call "session::list" with {"metadata": {"owner": "u1"}, "order": "created_asc"}
    Then the response ids at "sessions" are "m1, m4"
    When I call "session::list" with {"metadata": {"tags": ["a"]}}
    Then the response is {"sessions": []}
    When I call "session::list" with {"metadata": {"tags": ["a", "b"]}}
    Then the response is:
      """
      {"sessions": [{"session_id": "m4", "title": "", "description": "", "status": "idle",
        "kind": "user", "metadata": {"owner": "u1", "tags": ["a", "b"]}, "created_at": 1000000,
        "updated_at": 1000000, "message_count": 0}]}
      """
    When I call "session::list" with {"metadata": {"owner": "u1", "team": "y"}}
    Then the response is {"sessions": []}

  # Prevents: an empty metadata filter excluding sessions that have no metadata at all.
  Scenario: an empty metadata filter matches every session
    Given a session "m1" with metadata {"owner": "u1"}
    And a session "m2"
    And a session "m3" with metadata {}
    When I call "session::list" with {"metadata": {}, "order": "created_asc"}
    Then the response ids at "sessions" are "m1, m2, m3"

  # Prevents: combined filters being OR-ed instead of AND-ed.
  Scenario: status, kinds and metadata must all hold
    Given I called "session::ensure" with {"session_id": "x1", "kind": "automation", "metadata": {"owner": "u1"}}
    And I called "session::ensure" with {"session_id": "x2", "kind": "automation", "metadata": {"owner": "u1"}}
    And I called "session::ensure" with {"session_id": "x3", "kind": "user", "metadata": {"owner": "u1"}}
    And I called "session::ensure" with {"session_id": "x4", "kind": "automation", "metadata": {"owner": "u2"}}
    And I called "session::set-status" with {"session_id": "x2", "status": "done"}
    And I called "session::set-status" with {"session_id": "x3", "status": "done"}
    And I called "session::set-status" with {"session_id": "x4", "status": "done"}
    When I call "session::list" with {"status": "done", "kinds": ["automation"], "metadata": {"owner": "u1"}}
    Then the response ids at "sessions" are "x2"

  # Prevents: cursor paging skipping or repeating sessions that share a timestamp.
  Scenario Outline: cursor paging is gapless and duplicate-free under timestamp ties
    Given a session "p3"
    And a session "p1"
    And a session "p2"
    And the clock advances by 10 ms
    And a session "p5"
    And a session "p4"
    When I call "session::list" with {"order": "<order>", "limit": 2}
    Then the response ids at "sessions" are "<page1>"
    When I call "session::list" with {"order": "<order>", "limit": 2} passing the previous "next_cursor" as "cursor"
    Then the response ids at "sessions" are "<page2>"
    When I call "session::list" with {"order": "<order>", "limit": 2} passing the previous "next_cursor" as "cursor"
    Then the response ids at "sessions" are "<page3>"
    And the response field "next_cursor" does not exist

    Examples:
      | order        | page1  | page2  | page3 |
      | created_asc  | p1, p2 | p3, p4 | p5    |
      | created_desc | p5, p4 | p3, p2 | p1    |
      | updated_desc | p5, p4 | p3, p2 | p1    |

  # Prevents: resuming by looking the cursor's session up (breaks when that session was deleted).
  Scenario: a cursor still resumes after its session was deleted
    Given a session "p1"
    And a session "p2"
    And a session "p3"
    And a session "p4"
    When I call "session::list" with {"order": "created_asc", "limit": 2}
    Then the response ids at "sessions" are "p1, p2"
    And the response field "next_cursor" is "eyJvIjoiY3JlYXRlZF9hc2MiLCJrIjoxMDAwMDAwLCJpZCI6InAyIn0="
    Given I called "session::delete" with {"session_id": "p2"}
    When I call "session::list" with {"order": "created_asc", "limit": 2, "cursor": "eyJvIjoiY3JlYXRlZF9hc2MiLCJrIjoxMDAwMDAwLCJpZCI6InAyIn0="}
    Then the response ids at "sessions" are "p3, p4"
    And the response field "next_cursor" does not exist

  # Prevents: the list cursor encoding drifting from the documented base64 JSON {o,k,id} (extra keys ignored).
  Scenario: a cursor in the documented encoding resumes after its position
    Given a session "p1"
    And a session "p2"
    And a session "p3"
    When I call "session::list" with {"order": "created_asc", "cursor": "eyJvIjoiY3JlYXRlZF9hc2MiLCJrIjoxMDAwMDAwLCJpZCI6InAyIiwiZXh0cmEiOnRydWV9"}
    Then the response ids at "sessions" are "p3"

  # Prevents: a cursor issued for one order silently reused under another (wrong, shuffled pages).
  Scenario: a cursor issued for another order is an invalid cursor
    Given a session "p1"
    And a session "p2"
    And a session "p3"
    When I call "session::list" with {"order": "created_asc", "limit": 1}
    Then the response ids at "sessions" are "p1"
    When I call "session::list" with {"order": "created_desc", "limit": 1} passing the previous "next_cursor" as "cursor"
    Then the call fails with "session/invalid_cursor"
    And no events fired
    When I call "session::list" with {"order": "created_asc", "limit": 1}
    And I call "session::list" with {"limit": 1} passing the previous "next_cursor" as "cursor"
    Then the call fails with "session/invalid_cursor"

  # Prevents: a garbage cursor being treated as "start from the beginning" or failing with the wrong code.
  Scenario Outline: a malformed cursor is an invalid cursor
    Given a session "p1"
    When I call "session::list" with {"cursor": "<cursor>"}
    Then the call fails with "session/invalid_cursor"
    And no events fired

    Examples:
      | cursor                                                   |
      | not base64!                                              |
      | aGVsbG8=                                                 |
      | eyJvIjoidXBkYXRlZF9kZXNjIn0=                             |
      | eyJvIjoidXBkYXRlZF9kZXNjIiwiayI6IngiLCJpZCI6InAxIn0=     |
      | WzEsMl0=                                                 |
      |                                                          |

  # Prevents: limit 0 returning an empty page (an endless paging loop) instead of one session.
  Scenario: limit 0 is raised to 1
    Given a session "p1"
    And a session "p2"
    When I call "session::list" with {"order": "created_asc", "limit": 0}
    Then the response ids at "sessions" are "p1"
    And the response field "next_cursor" exists

  # Prevents: a caller bypassing the configured maximum page size.
  Scenario: a limit above the maximum is clamped to it
    Given the max list limit is 3
    And a session "p1"
    And a session "p2"
    And a session "p3"
    And a session "p4"
    When I call "session::list" with {"order": "created_asc", "limit": 100}
    Then the response ids at "sessions" are "p1, p2, p3"
    And the response field "next_cursor" exists

  # Prevents: the default page size being hard-coded instead of read from the live limits.
  Scenario: an omitted limit uses the configured default
    Given the default list limit is 2
    And a session "p1"
    And a session "p2"
    And a session "p3"
    When I call "session::list" with {"order": "created_asc"}
    Then the response ids at "sessions" are "p1, p2"
    When I call "session::list" with {"order": "created_asc"} passing the previous "next_cursor" as "cursor"
    Then the response ids at "sessions" are "p3"
    And the response field "next_cursor" does not exist

  # Prevents: next_cursor being emitted when the page ends exactly at the last session.
  Scenario: no cursor when the page ends exactly at the last session
    Given a session "p1"
    And a session "p2"
    When I call "session::list" with {"limit": 2}
    Then the response field "sessions" has 2 items
    And the response field "next_cursor" does not exist

  # Prevents: a negative limit wrapping around or being clamped instead of rejected as malformed.
  Scenario: a negative limit is an invalid request
    Given a session "p1"
    When I call "session::list" with {"limit": -1}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired

  # Prevents: unknown enum values (an order or a non-existent status like "waiting") being accepted.
  Scenario Outline: unknown enum values are invalid requests
    Given a session "p1"
    When I call "session::list" with <request>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"

    Examples:
      | request                       |
      | {"order": "alphabetical"}     |
      | {"status": "waiting"}         |
      | {"kinds": ["robot"]}          |

  # Prevents: null optional fields being read as filters (e.g. kinds: null as "match nothing").
  Scenario: null for every optional field behaves like omission
    Given a session "a" with metadata {"owner": "u1"}
    And the clock advances by 1 ms
    And a session "b"
    When I call "session::list" with {"limit": null, "cursor": null, "status": null, "kinds": null, "metadata": null, "order": null}
    Then the response ids at "sessions" are "b, a"
    And the response field "next_cursor" does not exist
