@pure
Feature: session::messages-tail
  The newest page of the active path in whole blocks (a single entry, or one maximal run of
  activity-run members), runs collapsed to placeholders, paged backwards by before_entry_id.
  Exact rules: contract §8.

  # Prevents: wrong segmentation of the first worked example of §8.4 (runs split or merged across non-members).
  Scenario: the first worked example segments into five blocks
    Given a session "s1"
    And "s1" has entries:
      | id                  | role      | text   | calls | answers | custom_type   |
      | u1                  | user      | hi     |       |         |               |
      | a1                  | assistant |        | c1    |         |               |
      | r1                  | function_result | o1 |     | c1      |               |
      | a2                  | assistant | more   | c2    |         |               |
      | r2                  | function_result | o2 |     | c2      |               |
      | a3                  | assistant | prose  |       |         |               |
      | u2                  | user      | next   |       |         |               |
      | e_fire_sub_1_1      | user      | wake   |       |         |               |
      | e_trigfired_sub_1_1 | entry     | {"t": 1} |     |         | trigger_fired |
      | a4                  | assistant |        | c4    |         |               |
      | r4                  | function_result | o4 |     | c4      |               |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "e_fire_sub_1_1, e_trigfired_sub_1_1, a4, r4"
    And the elided items at "messages" are ""
    And the response contains {"has_more": true, "oldest_entry_id": "e_fire_sub_1_1"}
    And no events fired
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "e_fire_sub_1_1"}
    Then the response ids at "messages" are "u2"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "u2"}
    Then the response ids at "messages" are "a3"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "a3"}
    Then the response ids at "messages" are "a1, r1, a2, r2"
    And the elided items at "messages" are "a1, r1"
    And the response contains {"has_more": true, "oldest_entry_id": "a1"}
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "a1"}
    Then the response ids at "messages" are "u1"
    And the response contains {"has_more": false, "oldest_entry_id": "u1"}
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1, r1, a2, r2, a3, u2, e_fire_sub_1_1, e_trigfired_sub_1_1, a4, r4"
    And the elided items at "messages" are "a1, r1"
    And the response contains {"has_more": false, "oldest_entry_id": "u1"}

  # Prevents: a compaction entry not splitting a run (second worked example of §8.4).
  Scenario: the second worked example: a compaction entry splits the run
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers | custom_type |
      | a1 | assistant       |      | c1    |         |             |
      | r1 | function_result | o1   |       | c1      |             |
      | k1 | entry           | {}   |       |         | compaction  |
      | a2 | assistant       |      | c2    |         |             |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "a2"
    And the elided items at "messages" are ""
    And the response contains {"has_more": true, "oldest_entry_id": "a2"}
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "a2"}
    Then the response ids at "messages" are "k1"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "k1"}
    Then the response ids at "messages" are "a1, r1"
    And the elided items at "messages" are ""
    And the response contains {"has_more": false, "oldest_entry_id": "a1"}

  # Prevents: include_custom:false filtering after segmentation (the compaction entry must not split the run then).
  Scenario: without custom entries the second example becomes one run
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers | custom_type |
      | a1 | assistant       |      | c1    |         |             |
      | r1 | function_result | o1   |       | c1      |             |
      | k1 | entry           | {}   |       |         | compaction  |
      | a2 | assistant       |      | c2    |         |             |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "include_custom": false}
    Then the response ids at "messages" are "a1, r1, a2"
    And the elided items at "messages" are "a1, r1"
    And the response is:
      """
      {"has_more": false, "oldest_entry_id": "a1", "messages": [
        {"entry_id": "a1", "elided": true, "message": {"role": "assistant", "content": [
          {"type": "function_call", "id": "c1", "function_id": "tool", "arguments": {}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "r1", "elided": true, "message": {"role": "function_result", "function_call_id": "c1",
          "function_id": "tool", "content": [], "details": null, "is_error": false, "timestamp": 3}},
        {"entry_id": "a2", "message": {"role": "assistant", "content": [
          {"type": "function_call", "id": "c2", "function_id": "tool", "arguments": {"q": "c2"}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}]}
      """

  # Prevents: the collapse keeping the wrong entries (the §8.7 example: kept flags true,false,false,true,true,false).
  Scenario: the collapse example keeps the wake entry, the last call and its answers
    Given a session "s1"
    And "s1" has entries:
      | id             | role            | text  | calls | answers |
      | e_fire_sub_1_1 | user            | wake  |       |         |
      | a1             | assistant       | first | c1    |         |
      | r1             | function_result | out1  |       | c1      |
      | a2             | assistant       |       | c2    |         |
      | r2             | function_result | out2  |       | c2      |
      | r2b            | function_result | out9  |       | c9      |
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response is:
      """
      {"has_more": false, "oldest_entry_id": "e_fire_sub_1_1", "messages": [
        {"entry_id": "e_fire_sub_1_1", "message": {"role": "user", "content": [{"type": "text", "text": "wake"}], "timestamp": 1}},
        {"entry_id": "a1", "elided": true, "message": {"role": "assistant", "content": [
          {"type": "text", "text": "first"},
          {"type": "function_call", "id": "c1", "function_id": "tool", "arguments": {}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "r1", "elided": true, "message": {"role": "function_result", "function_call_id": "c1",
          "function_id": "tool", "content": [], "details": null, "is_error": false, "timestamp": 3}},
        {"entry_id": "a2", "message": {"role": "assistant", "content": [
          {"type": "function_call", "id": "c2", "function_id": "tool", "arguments": {"q": "c2"}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "r2", "message": {"role": "function_result", "function_call_id": "c2", "function_id": "tool",
          "content": [{"type": "text", "text": "out2"}], "details": {"raw": "out2"}, "is_error": false, "timestamp": 3}},
        {"entry_id": "r2b", "elided": true, "message": {"role": "function_result", "function_call_id": "c9",
          "function_id": "tool", "content": [], "details": null, "is_error": false, "timestamp": 3}}]}
      """

  # Prevents: heavy parts surviving in placeholders (thinking, arguments, result content) or light parts being lost.
  Scenario: placeholder shapes drop thinking and arguments but keep labels, text, media and accounting
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u0 | user | go   |
    And I called "session::append" with:
      """
      {"session_id": "s1", "entry_id": "a1", "origin": {"turn": 1}, "message": {"role": "assistant",
        "stop_reason": "function_call", "model": "m", "provider": "p", "agent": "pi", "timestamp": 2,
        "usage": {"input": 5, "output": 6}, "content": [
          {"type": "thinking", "text": "plan", "signature": "sig"},
          {"type": "text", "text": "calling"},
          {"type": "function_call", "id": "c1", "function_id": "agent_trigger",
           "arguments": {"function": "w::run", "description": "Run w", "payload": {"big": 1}, "extra": 2}},
          {"type": "function_call", "id": "c2", "function_id": "agent_trigger", "arguments": {"function": "w::x", "description": 7}},
          {"type": "function_call", "id": "c3", "function_id": "agent_trigger", "arguments": "w::y"},
          {"type": "function_call", "id": "c4", "function_id": "my::agent_trigger", "arguments": {"function": "f", "description": "d"}},
          {"type": "function_call", "id": "c5", "function_id": "search", "arguments": {"q": "x"}},
          {"type": "function_call", "id": "c6", "function_id": "noargs"},
          {"type": "thinking", "text": "more"},
          {"type": "image", "mime": "image/png", "data": "AAAA"},
          {"type": "file", "attachment_id": "a_9", "name": "f.txt", "mime": "text/plain", "size": 1}]}}
      """
    And I called "session::append" with {"session_id": "s1", "entry_id": "r1", "message": {"role": "function_result", "function_call_id": "c1", "function_id": "agent_trigger", "is_error": true, "content": [{"type": "text", "text": "boom"}], "details": {"trace": 1}, "timestamp": 3}}
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | a2 | assistant       |      | c7    |         |
      | r7 | function_result | ok   |       | c7      |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "a1, r1, a2, r7"
    And the elided items at "messages" are "a1, r1"
    And the response field "messages.0" is:
      """
      {"entry_id": "a1", "elided": true, "origin": {"turn": 1}, "message": {"role": "assistant",
        "stop_reason": "function_call", "model": "m", "provider": "p", "agent": "pi", "timestamp": 2,
        "usage": {"input": 5, "output": 6}, "content": [
          {"type": "text", "text": "calling"},
          {"type": "function_call", "id": "c1", "function_id": "agent_trigger", "arguments": {"function": "w::run", "description": "Run w"}},
          {"type": "function_call", "id": "c2", "function_id": "agent_trigger", "arguments": {"function": "w::x"}},
          {"type": "function_call", "id": "c3", "function_id": "agent_trigger", "arguments": {}},
          {"type": "function_call", "id": "c4", "function_id": "my::agent_trigger", "arguments": {}},
          {"type": "function_call", "id": "c5", "function_id": "search", "arguments": {}},
          {"type": "function_call", "id": "c6", "function_id": "noargs", "arguments": {}},
          {"type": "image", "mime": "image/png", "data": "AAAA"},
          {"type": "file", "attachment_id": "a_9", "name": "f.txt", "mime": "text/plain", "size": 1}]}}
      """
    And the response field "messages.1" is:
      """
      {"entry_id": "r1", "elided": true, "message": {"role": "function_result", "function_call_id": "c1",
        "function_id": "agent_trigger", "is_error": true, "content": [], "details": null, "timestamp": 3}}
      """
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["r1", "a1"]}
    Then the response ids at "messages" are "a1, r1"
    And the elided items at "messages" are ""
    And the response field "messages.0.message.content.0" is {"type": "thinking", "text": "plan", "signature": "sig"}
    And the response field "messages.0.message.content.2.arguments" is {"function": "w::run", "description": "Run w", "payload": {"big": 1}, "extra": 2}
    And the response field "messages.1.message.details" is {"trace": 1}

  # Prevents: origin flags matched by truthiness instead of the JSON boolean true.
  Scenario Outline: a user message is a wake entry only for boolean-true origin flags
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text  | calls | answers | origin   |
      | u0 | user            | hi    |       |         |          |
      | w  | user            | ping  |       |         | <origin> |
      | a  | assistant       |       | c1    |         |          |
      | r  | function_result | o     |       | c1      |          |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "<page>"
    And the response field "has_more" is true

    Examples:
      | origin                                      | page    |
      | {"notification": true}                      | w, a, r |
      | {"trigger_fired": true}                     | w, a, r |
      | {"notification": false, "trigger_fired": true} | w, a, r |
      | {"notification": "true"}                    | a, r    |
      | {"trigger_fired": 1}                        | a, r    |
      | {"notification": false}                     | a, r    |
      | {"wake": true}                              | a, r    |

  # Prevents: a missing or mistyped wake id prefix (the nine prefixes of §8.2, matched as prefixes only).
  Scenario Outline: a user message is a wake entry by id prefix
    Given a session "s1"
    And "s1" has entries:
      | id    | role            | text | calls | answers |
      | u0    | user            | hi   |       |         |
      | <id>  | user            | ping |       |         |
      | a     | assistant       |      | c1    |         |
      | r     | function_result | o    |       | c1      |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "<page>"

    Examples:
      | id                  | page                    |
      | e_fire_1            | e_fire_1, a, r          |
      | e_notify_1          | e_notify_1, a, r        |
      | e_expire_1          | e_expire_1, a, r        |
      | e_stalespawn_1      | e_stalespawn_1, a, r    |
      | e_claimfail_1       | e_claimfail_1, a, r     |
      | e_condfail_1        | e_condfail_1, a, r      |
      | e_trigfired_1       | e_trigfired_1, a, r     |
      | e_trigexpired_1     | e_trigexpired_1, a, r   |
      | e_trigstale_1       | e_trigstale_1, a, r     |
      | e_firework          | a, r                    |
      | x_e_fire_1          | a, r                    |
      | E_FIRE_1            | a, r                    |

  # Prevents: wrong run membership for custom messages, custom entries and assistant messages (§8.3 table).
  Scenario Outline: run membership of each entry kind
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text   | calls   | answers | custom_type | origin   |
      | u0 | user            | hi     |         |         |             |          |
      | x  | <role>          | <text> | <calls> |         | <type>      | <origin> |
      | a  | assistant       |        | c1      |         |             |          |
      | r  | function_result | o      |         | c1      |             |          |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "<page>"
    And the elided items at "messages" are "<elided>"

    Examples:
      | role      | text  | calls | type          | origin                 | page    | elided |
      | custom    | t     |       | trigger_fired |                        | x, a, r |        |
      | custom    | t     |       | notice        | {"notification": true} | x, a, r |        |
      | custom    | t     |       | notice        |                        | a, r    |        |
      | entry     | {}    |       | trigger_fired |                        | x, a, r |        |
      | entry     | {}    |       | bookmark      | {"trigger_fired": true}| x, a, r |        |
      | entry     | {}    |       | compaction    |                        | a, r    |        |
      | assistant | t     | c0    |               |                        | x, a, r | x      |
      | assistant | prose |       |               |                        | a, r    |        |
      | user      | plain |       |               |                        | a, r    |        |

  # Prevents: a custom entry with a wake id prefix not joining the run (its stored origin/id still count).
  Scenario: a custom entry with a wake prefix joins the run and is never elided
    Given a session "s1"
    And "s1" has entries:
      | id            | role            | text | calls | answers | custom_type |
      | u0            | user            | hi   |       |         |             |
      | e_notify_k    | entry           | 1    |       |         | note        |
      | a             | assistant       |      | c1    |         |             |
      | r             | function_result | o    |       | c1      |             |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "e_notify_k, a, r"
    And the response field "messages.0" is {"entry_id": "e_notify_k", "custom": {"custom_type": "note", "data": 1}}

  # Prevents: nested function_call blocks (inside a function_result block) making an assistant message a member.
  Scenario: only top-level function_call blocks make an assistant message a run member
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u0 | user | hi   |
    And I called "session::append" with {"session_id": "s1", "entry_id": "x", "message": {"role": "assistant", "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "content": [{"type": "function_result", "function_call_id": "c0", "content": [{"type": "function_call", "id": "n", "function_id": "f"}]}]}}
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | a  | assistant       |      | c1    |         |
      | r  | function_result | o    |       | c1      |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "a, r"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "a"}
    Then the response ids at "messages" are "x"
    And the elided items at "messages" are ""

  # Prevents: orphan results being shown whole, or a run of wake entries only not forming one block.
  Scenario: orphan results form an elided run and wake-only runs stay whole
    Given a session "s1"
    And "s1" has entries:
      | id         | role            | text | answers |
      | u0         | user            | hi   |         |
      | e_notify_1 | user            | n1   |         |
      | rx         | function_result | o    | c9      |
      | u1         | user            | hey  |         |
      | e_fire_1   | user            | f1   |         |
      | e_fire_2   | user            | f2   |         |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1}
    Then the response ids at "messages" are "e_fire_1, e_fire_2"
    And the elided items at "messages" are ""
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 2, "before_entry_id": "e_fire_2"}
    Then the response ids at "messages" are "e_notify_1, rx, u1"
    And the elided items at "messages" are "rx"
    And the response field "messages.1.message" is {"role": "function_result", "function_call_id": "c9", "function_id": "tool", "content": [], "details": null, "is_error": false, "timestamp": 3}

  # Prevents: the newest, still-growing run being shown expanded instead of collapsed.
  Scenario: the newest run is collapsed even while it is still growing
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | u0 | user            | hi   |       |         |
      | a1 | assistant       |      | c1    |         |
      | r1 | function_result | o    |       | c1      |
      | a2 | assistant       |      | c2    |         |
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response ids at "messages" are "u0, a1, r1, a2"
    And the elided items at "messages" are "a1, r1"

  # Prevents: limit counting entries instead of blocks (a long run must count once).
  Scenario: limit counts blocks, not entries
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text  | calls | answers |
      | u1 | user            | hi    |       |         |
      | a1 | assistant       |       | c1    |         |
      | r1 | function_result | o     |       | c1      |
      | a2 | assistant       |       | c2    |         |
      | r2 | function_result | o     |       | c2      |
      | a3 | assistant       |       | c3    |         |
      | r3 | function_result | o     |       | c3      |
      | p  | assistant       | prose |       |         |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 2}
    Then the response ids at "messages" are "a1, r1, a2, r2, a3, r3, p"
    And the elided items at "messages" are "a1, r1, a2, r2"
    And the response contains {"has_more": true, "oldest_entry_id": "a1"}
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 3}
    Then the response field "messages" has 8 items
    And the response contains {"has_more": false, "oldest_entry_id": "u1"}

  # Prevents: before_entry_id splitting a block (its whole block must be excluded) or a non-empty first page.
  Scenario: before_entry_id excludes the whole block that holds the anchor
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | u1 | user            | hi   |       |         |
      | a1 | assistant       |      | c1    |         |
      | r1 | function_result | o    |       | c1      |
      | a2 | assistant       |      | c2    |         |
      | r2 | function_result | o    |       | c2      |
      | p  | assistant       | done |       |         |
    When I call "session::messages-tail" with {"session_id": "s1", "before_entry_id": "r1"}
    Then the response is {"messages": [{"entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}], "has_more": false, "oldest_entry_id": "u1"}
    When I call "session::messages-tail" with {"session_id": "s1", "before_entry_id": "u1"}
    Then the response is {"messages": [], "has_more": false}
    When I call "session::messages-tail" with {"session_id": "s1", "before_entry_id": "p", "limit": 1}
    Then the response ids at "messages" are "a1, r1, a2, r2"
    And the response field "has_more" is true

  # Prevents: until_entry_id not widening to the target's block, or narrowing/shifting a page it is already in.
  Scenario: until_entry_id widens the page back to the target block and is a no-op otherwise
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | u1 | user            | q1   |       |         |
      | a1 | assistant       |      | c1    |         |
      | r1 | function_result | o    |       | c1      |
      | u2 | user            | q2   |       |         |
      | p2 | assistant       | a2   |       |         |
      | u3 | user            | q3   |       |         |
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "until_entry_id": "r1"}
    Then the response ids at "messages" are "a1, r1, u2, p2, u3"
    And the response contains {"has_more": true, "oldest_entry_id": "a1"}
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "until_entry_id": "u1"}
    Then the response ids at "messages" are "u1, a1, r1, u2, p2, u3"
    And the response field "has_more" is false
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 2, "until_entry_id": "u3"}
    Then the response ids at "messages" are "p2, u3"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "u2", "until_entry_id": "u3"}
    Then the response ids at "messages" are "a1, r1"
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 1, "before_entry_id": "p2", "until_entry_id": "u1"}
    Then the response ids at "messages" are "u1, a1, r1, u2"
    And the response field "has_more" is false

  # Prevents: custom entries being hidden by default or not removable with include_custom:false (custom messages stay).
  Scenario: include_custom defaults to true and false removes only custom entries
    Given a session "s1"
    And "s1" has entries:
      | id | role   | text | custom_type | origin       |
      | u1 | user   | hi   |             |              |
      | k1 | entry  | 1    | compaction  | {"turn": 1}  |
      | n1 | custom | n    | notice      | {"turn": 1}  |
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response is:
      """
      {"has_more": false, "oldest_entry_id": "u1", "messages": [
        {"entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}},
        {"entry_id": "k1", "custom": {"custom_type": "compaction", "data": 1}},
        {"entry_id": "n1", "origin": {"turn": 1}, "message": {"role": "custom", "custom_type": "notice", "content": [{"type": "text", "text": "n"}], "timestamp": 4}}]}
      """
    When I call "session::messages-tail" with {"session_id": "s1", "include_custom": null}
    Then the response ids at "messages" are "u1, k1, n1"
    When I call "session::messages-tail" with {"session_id": "s1", "include_custom": false}
    Then the response ids at "messages" are "u1, n1"

  # Prevents: anchors off the (filtered) active path being accepted or mapped to a wrong block.
  Scenario Outline: an anchor that is not on the filtered active path is invalid_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | custom_type |
      | u1 | user      | q    |             |
      | k1 | entry     | 1    | bookmark    |
      | a1 | assistant | a    |             |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "k1"}
    And "s1" has entries:
      | id | role      | text |
      | a2 | assistant | alt  |
    When I call "session::messages-tail" with <payload>
    Then the call fails with "session/invalid_cursor"

    Examples:
      | payload                                                                       |
      | {"session_id": "s1", "before_entry_id": "a1"}                                 |
      | {"session_id": "s1", "before_entry_id": "nope"}                               |
      | {"session_id": "s1", "until_entry_id": "a1"}                                  |
      | {"session_id": "s1", "until_entry_id": "nope"}                                |
      | {"session_id": "s1", "before_entry_id": "k1", "include_custom": false}        |
      | {"session_id": "s1", "until_entry_id": "k1", "include_custom": false}         |

  # Prevents: a session without a leaf validating anchors (it must answer an empty page) or erroring.
  Scenario: no active leaf gives an empty page without anchor validation
    Given a session "s1"
    When I call "session::messages-tail" with {"session_id": "s1", "before_entry_id": "nope", "until_entry_id": "nada"}
    Then the response is {"messages": [], "has_more": false}
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response is {"messages": [], "has_more": false}

  # Prevents: unknown sessions reading as an empty page.
  Scenario: an unknown session is not_found
    When I call "session::messages-tail" with {"session_id": "ghost"}
    Then the call fails with "session/not_found"

  # Prevents: image elision skipped on whole or elided tail items.
  Scenario: include_image_data false blanks linked images in whole and elided items
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "content": [{"type": "image", "mime": "image/png", "data": "AAAA", "attachment_id": "a_1"}, {"type": "function_call", "id": "c1", "function_id": "f"}]}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "a2", "message": {"role": "assistant", "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "content": [{"type": "image", "mime": "image/png", "data": "BBBB", "attachment_id": "a_2"}, {"type": "image", "mime": "image/png", "data": "CCCC"}, {"type": "function_call", "id": "c2", "function_id": "f"}]}}
    When I call "session::messages-tail" with {"session_id": "s1", "include_image_data": false}
    Then the elided items at "messages" are "a1"
    And the response field "messages.0.message.content.0" is {"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_1"}
    And the response field "messages.1.message.content.0" is {"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_2"}
    And the response field "messages.1.message.content.1" is {"type": "image", "mime": "image/png", "data": "CCCC"}
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response field "messages.0.message.content.0.data" is "AAAA"

  # Prevents: backward paging with gaps, duplicates or empty pages (must reproduce messages{include_custom:true}).
  Scenario Outline: walking back page by page reproduces the full transcript
    Given a session "s1"
    And "s1" has entries:
      | id             | role            | text  | calls  | answers | custom_type   | origin                 |
      | u1             | user            | hi    |        |         |               |                        |
      | a1             | assistant       |       | c1, c2 |         |               |                        |
      | r1             | function_result | o     |        | c1      |               |                        |
      | r2             | function_result | o     |        | c2      |               |                        |
      | k1             | entry           | {}    |        |         | compaction    |                        |
      | a2             | assistant       | prose |        |         |               |                        |
      | w1             | user            | wake  |        |         |               | {"trigger_fired": true}|
      | t1             | entry           | {}    |        |         | trigger_fired |                        |
      | a3             | assistant       |       | c3     |         |               |                        |
      | r3             | function_result | o     |        | c3      |               |                        |
      | n1             | custom          | note  |        |         | notice        |                        |
      | e_fire_x       | user            | f     |        |         |               |                        |
      | u2             | user            | bye   |        |         |               |                        |
    Then walking "s1" back with messages-tail at limit <limit> reproduces messages with include_custom

    Examples:
      | limit |
      | 1     |
      | 2     |
      | 3     |
      | 50    |
