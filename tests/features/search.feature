@pure
Feature: session::search
  Full-text search across a tenant's sessions (issue 39): words (every one must match),
  "exact phrases" and prefix*; case and accents folded; CJK found by substrings of two or more
  characters; identifiers and paths whole and by their parts. Hits are entries (and session titles
  and descriptions), best first, paged with a cursor. Trashed and deleted sessions are never found.

  Background:
    Given a session "s1" with metadata {"owner": "u1"}
    And I called "session::set-meta" with {"session_id": "s1", "title": "Refactor the parser"}
    And "s1" has entries:
      | id | role            | text                                             | calls | answers | parent |
      | q1 | user            | Please refactor parser.rs and run the tests.    |       |         |        |
      | a1 | assistant       |                                                  | c1    |         |        |
      | r1 | function_result | 42 passed; 0 failed in src/fs/mod.rs            |       | c1      |        |
      | a2 | assistant       | Die Größe passt. snake_case and camelCaseHelper |       |         |        |
      | b1 | assistant       | Alternative: 東京都に住んでいます                  |       |         | q1     |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a2"}
    And a session "s2" with metadata {"owner": "u2"}
    And "s2" has entries:
      | id | role | text               |
      | x1 | user | the parser of u2   |

  # Prevents: a word found only in its exact case or spelling, or a hit for a partial match.
  Scenario: every word must occur, in any case and accent
    When I call "session::search" with {"query": "PARSER tests", "metadata": {"owner": "u1"}}
    Then the "session_id" values at "hits" are "s1"
    And the "entry_id" values at "hits" are "q1"
    And the response field "hits.0.role" is "user"
    And the response field "hits.0.title" is "Refactor the parser"
    When I call "session::search" with {"query": "grosse"}
    Then the "entry_id" values at "hits" are "a2"
    And the response field "hits.0.highlights" is [[4, 9]]
    When I call "session::search" with {"query": "parser lexer"}
    Then the response field "hits" has 0 items

  # Prevents: tenants seeing each other's sessions.
  Scenario: metadata scopes the search like session::list
    When I call "session::search" with {"query": "parser", "kinds": ["message"]}
    Then the "entry_id" values at "hits" are "q1, x1"
    When I call "session::search" with {"query": "parser", "kinds": ["message"], "metadata": {"owner": "u2"}}
    Then the "entry_id" values at "hits" are "x1"

  # Prevents: identifiers, paths and CJK text that cannot be found (the peers' tokenizer bugs).
  Scenario: identifiers, paths, phrases, prefixes and CJK substrings
    When I call "session::search" with {"query": "mod.rs"}
    Then the "entry_id" values at "hits" are "r1"
    When I call "session::search" with {"query": "camelCase snake_case"}
    Then the "entry_id" values at "hits" are "a2"
    When I call "session::search" with {"query": "\"run the tests\""}
    Then the "entry_id" values at "hits" are "q1"
    When I call "session::search" with {"query": "refact*", "kinds": ["message"]}
    Then the "entry_id" values at "hits" are "q1"
    When I call "session::search" with {"query": "京都"}
    Then the "entry_id" values at "hits" are "b1"
    When I call "session::search" with {"query": "c1", "roles": ["assistant"]}
    Then the "entry_id" values at "hits" are "a1"

  # Prevents: an inactive branch leaking into an "active" search, or a title not found.
  Scenario: branch, kinds and roles narrow the hits
    When I call "session::search" with {"query": "alternative", "branch": "active"}
    Then the response field "hits" has 0 items
    When I call "session::search" with {"query": "alternative"}
    Then the "entry_id" values at "hits" are "b1"
    When I call "session::search" with {"query": "refactor", "kinds": ["session"]}
    Then the response field "hits.0.kind" is "session"
    And the response field "hits.0.entry_id" is null
    When I call "session::search" with {"query": "passed", "roles": ["user"]}
    Then the response field "hits" has 0 items

  # Prevents: a session still found after the call that removed it was acknowledged.
  Scenario: trashed and deleted sessions are never found, restored ones are again
    When I call "session::trash" with {"session_id": "s1"}
    And I call "session::search" with {"query": "parser"}
    Then the "session_id" values at "hits" are "s2"
    When I call "session::restore" with {"session_id": "s1"}
    And I call "session::search" with {"query": "parser", "session_ids": ["s1"], "kinds": ["message"]}
    Then the "entry_id" values at "hits" are "q1"
    When I call "session::delete" with {"session_id": "s2"}
    And I call "session::search" with {"query": "u2"}
    Then the response field "hits" has 0 items

  # Prevents: pages that repeat or skip hits, and a restart that loses what was found.
  Scenario: pages follow the cursor, and a restart finds the same
    When I call "session::search" with {"query": "parser", "limit": 1}
    Then the "session_id" values at "hits" are "s1"
    And the response field "next_cursor" exists
    When I call "session::search" with {"query": "parser", "limit": 2} passing the previous "next_cursor" as "cursor"
    Then the response field "hits" has 2 items
    When the store restarts
    And I call "session::search" with {"query": "camelcasehelper"}
    Then the "entry_id" values at "hits" are "a2"

  # Prevents: syntax errors or panics reaching the caller.
  Scenario: any string is a query; only an empty one, one too long or a bad field is refused
    When I call "session::search" with {"query": "\"unbalanced ( AND OR * parser"}
    Then the call succeeds
    When I call "session::search" with {"query": "\u0001\u0007parser\u007f", "kinds": ["message"]}
    Then the "entry_id" values at "hits" are "q1, x1"
    When I call "session::search" with {"query": ""}
    Then the call fails with "session/invalid_request"
    When I call "session::search" with {"query": "*"}
    Then the call fails with "session/invalid_request"
    When I call "session::search" with {"query": "parser", "branch": "sideways"}
    Then the call fails with "session/invalid_request"
    When I call "session::search" with {"query": "parser", "cursor": "nonsense"}
    Then the call fails with "session/invalid_cursor"
    And no events fired
