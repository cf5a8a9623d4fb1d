@pure
Feature: trigger binding configs and filters
  Binding configs of the six public trigger types are parsed strictly (null = {}, unknown keys
  rejected); every supplied filter must hold; metadata is the session's as of the mutation.

  # Prevents: a null or empty config being rejected instead of meaning "no filter".
  Scenario Outline: a null or empty config is accepted on every public trigger type
    When I bind "b1" on "<type>" with config null
    Then the binding is accepted
    When I bind "b2" on "<type>" with config {}
    Then the binding is accepted

    Examples:
      | type                     |
      | session::created         |
      | session::message-added   |
      | session::message-updated |
      | session::status-changed  |
      | session::meta-updated    |
      | session::deleted         |

  # Prevents: typo'd filter keys being silently ignored (a subscriber then receives everything).
  Scenario Outline: unknown keys are rejected on every public trigger type
    When I bind "b1" on "<type>" with config {"sesion_id": "s1"}
    Then the binding is rejected with "unknown field"
    And the binding is rejected with "invalid <type> config"

    Examples:
      | type                     |
      | session::created         |
      | session::message-added   |
      | session::message-updated |
      | session::status-changed  |
      | session::meta-updated    |
      | session::deleted         |

  # Prevents: a roles filter being accepted (and ignored) on triggers whose events carry no role.
  Scenario Outline: roles is not a key of the session-level configs
    When I bind "b1" on "<type>" with config {"roles": ["user"]}
    Then the binding is rejected with "unknown field"

    Examples:
      | type                    |
      | session::status-changed |
      | session::meta-updated   |
      | session::deleted        |

  # Prevents: a session_id filter being accepted on created (the id does not exist before the event).
  Scenario: session_id is not a key of the created config
    When I bind "b1" on "session::created" with config {"session_id": "s1"}
    Then the binding is rejected with "unknown field"
    And the binding is rejected with "invalid session::created config"
    When I bind "b2" on "session::created" with config {"metadata": {"owner": "u1"}}
    Then the binding is accepted

  # Prevents: an invalid role string being accepted (or silently dropped from the list).
  Scenario: an invalid role string is rejected
    When I bind "b1" on "session::message-updated" with config {"roles": ["assistant", "system"]}
    Then the binding is rejected with "invalid session::message-updated config"
    When I bind "b2" on "session::message-added" with config {"roles": ["Assistant"]}
    Then the binding is rejected with "invalid session::message-added config"

  # Prevents: wrongly typed values being coerced, or an array config mapped onto the filter fields by position.
  Scenario Outline: wrongly typed filter values are rejected
    When I bind "b1" on "session::message-added" with config <config>
    Then the binding is rejected with "invalid session::message-added config"

    Examples:
      | config                          |
      | {"session_id": 5}               |
      | {"roles": "user"}               |
      | {"metadata": ["owner"]}         |
      | ["session_id"]                  |
      | "owner"                         |
      | true                            |

  # Prevents: null-valued keys being applied as filters (e.g. roles: null matching nothing).
  Scenario: keys set to null are the same as absent keys
    Given a binding "all" on "session::message-added" with config {"session_id": null, "roles": null, "metadata": null}
    And a session "s1"
    When I call "session::append" with {"session_id": "s1", "custom": {"custom_type": "mark", "data": null}}
    Then the events fired are "session::message-added"
    And binding "all" received 1 event

  # Prevents: the internal bridge feed rejecting configs it declares no keys for.
  Scenario: the store events feed accepts any config
    When I bind "relay" on "session::store::events" with config {"anything": true}
    Then the binding is accepted

  # Prevents: a session_id filter leaking other sessions' events.
  Scenario: session_id delivers only that session's events
    Given a binding "st" on "session::status-changed" with config {"session_id": "s1"}
    And a binding "mu" on "session::meta-updated" with config {"session_id": "s1"}
    And a binding "del" on "session::deleted" with config {"session_id": "s1"}
    And a session "s1"
    And a session "s2"
    When I call "session::set-status" with {"session_id": "s2", "status": "working"}
    Then the events fired are "session::status-changed"
    And binding "st" received nothing
    When I call "session::set-status" with {"session_id": "s1", "status": "working"}
    And I call "session::set-meta" with {"session_id": "s2", "title": "x"}
    And I call "session::set-meta" with {"session_id": "s1", "title": "y"}
    And I call "session::delete" with {"session_id": "s2"}
    And I call "session::delete" with {"session_id": "s1"}
    Then binding "st" received "session_id" values "s1"
    And binding "mu" received "session_id" values "s1"
    And binding "del" received "session_id" values "s1"

  # Prevents: roles matching custom entries, or roles ["custom"] not matching custom messages.
  Scenario: roles select messages by role; custom entries never match
    Given a binding "asst" on "session::message-added" with config {"roles": ["assistant"]}
    And a binding "cust" on "session::message-added" with config {"roles": ["custom"]}
    And a binding "every" on "session::message-added" with config {"roles": ["user", "assistant", "function_result", "custom"]}
    And a binding "none" on "session::message-added" with config {}
    And a session "s1"
    When I call "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [], "timestamp": 1}}
    And I call "session::append" with {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}
    And I call "session::append" with {"session_id": "s1", "entry_id": "r1", "message": {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [], "timestamp": 3}}
    And I call "session::append" with {"session_id": "s1", "entry_id": "m1", "message": {"role": "custom", "custom_type": "notice", "content": [], "timestamp": 4}}
    And I call "session::append" with {"session_id": "s1", "entry_id": "x1", "custom": {"custom_type": "notice", "data": {"role": "custom"}}}
    Then binding "asst" received "entry_id" values "a1"
    And binding "cust" received "entry_id" values "m1"
    And binding "every" received "entry_id" values "u1, a1, r1, m1"
    And binding "none" received "entry_id" values "u1, a1, r1, m1, x1"

  # Prevents: an empty roles list being treated as "no filter".
  Scenario: an empty roles list matches nothing
    Given a binding "b1" on "session::message-added" with config {"roles": []}
    And a session "s1"
    And "s1" has entries:
      | id | role      | text | custom_type |
      | e1 | user      | hi   |             |
      | e2 | custom    | n    | notice      |
      | e3 | entry     | {}   | mark        |
    Then binding "b1" received nothing

  # Prevents: message-updated ignoring the roles filter of its binding.
  Scenario: roles also filter message-updated
    Given a binding "asst" on "session::message-updated" with config {"roles": ["assistant"]}
    And a binding "user" on "session::message-updated" with config {"roles": ["user"]}
    And a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | assistant |      |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "e1", "content": [{"type": "text", "text": "Hi"}]}
    Then the events fired are "session::message-updated"
    And binding "asst" received "entry_id" values "e1"
    And binding "user" received nothing

  # Prevents: metadata filters matching by key presence, partial arrays, or against sessions without metadata.
  Scenario: metadata filters use subset and deep equality
    Given a binding "owner" on "session::message-added" with config {"metadata": {"owner": "u1"}}
    And a binding "part" on "session::message-added" with config {"metadata": {"tags": ["a"]}}
    And a binding "whole" on "session::message-added" with config {"metadata": {"tags": ["a", "b"]}}
    And a binding "empty" on "session::message-added" with config {"metadata": {}}
    And a binding "more" on "session::message-added" with config {"metadata": {"owner": "u1", "team": "y"}}
    And a binding "nested" on "session::message-added" with config {"metadata": {"cfg": {"x": 1}}}
    And a session "m1" with metadata {"owner": "u1", "tags": ["a", "b"], "cfg": {"x": 1, "y": 2}}
    And a session "m2"
    When I call "session::append" with {"session_id": "m1", "message": {"role": "user", "content": [], "timestamp": 1}}
    And I call "session::append" with {"session_id": "m2", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then binding "owner" received "session_id" values "m1"
    And binding "part" received nothing
    And binding "whole" received "session_id" values "m1"
    And binding "empty" received "session_id" values "m1, m2"
    And binding "more" received nothing
    And binding "nested" received nothing

  # Prevents: meta-updated filtered on the pre-update metadata (the new owner would miss the hand-over).
  Scenario: meta-updated is filtered on the post-update metadata
    Given a binding "old" on "session::meta-updated" with config {"metadata": {"owner": "u1"}}
    And a binding "new" on "session::meta-updated" with config {"metadata": {"owner": "u2"}}
    And a session "s1" with metadata {"owner": "u1"}
    When I call "session::set-meta" with {"session_id": "s1", "metadata": {"owner": "u2"}}
    Then binding "new" received 1 event
    And binding "new" last received exactly {"session_id": "s1", "title": "", "description": "", "metadata": {"owner": "u2"}, "timestamp": 1000000}
    And binding "old" received nothing

  # Prevents: deleted filtered on the (already gone) post-delete metadata, so tenants never hear of it.
  Scenario: deleted is filtered on the metadata as it was before deletion
    Given a binding "mine" on "session::deleted" with config {"metadata": {"owner": "u1"}}
    And a binding "theirs" on "session::deleted" with config {"metadata": {"owner": "u2"}}
    And a session "s1" with metadata {"owner": "u1"}
    And the clock advances by 5 ms
    When I call "session::delete" with {"session_id": "s1"}
    Then binding "mine" last received exactly {"session_id": "s1", "timestamp": 1000005}
    And binding "theirs" received nothing

  # Prevents: a fork's created event filtered without the inherited metadata.
  Scenario: a fork's created event carries the inherited metadata
    Given a binding "u1" on "session::created" with config {"metadata": {"owner": "u1"}}
    And a binding "u2" on "session::created" with config {"metadata": {"owner": "u2"}}
    And a session "src" with metadata {"owner": "u1"}
    And "src" has entries:
      | id | role | text |
      | e1 | user | hi   |
    When I call "session::fork" with {"session_id": "src", "entry_id": "e1"}
    Then the events fired are "session::created"
    And event 1 carries session metadata {"owner": "u1"}
    And binding "u1" received "session_id" values "src, s_001"
    And binding "u1" last received exactly {"session_id": "s_001", "title": "", "description": "", "status": "idle", "forked_from": "src", "created_at": 1000000}
    And binding "u2" received nothing

  # Prevents: an unbound handler still receiving deliveries.
  Scenario: unbinding stops delivery and a rebind starts fresh
    Given a binding "b1" on "session::status-changed" with config {}
    And a binding "b2" on "session::status-changed" with config {}
    And a session "s1"
    When I call "session::set-status" with {"session_id": "s1", "status": "working"}
    Then binding "b1" received 1 event
    When I unbind "b1"
    And I call "session::set-status" with {"session_id": "s1", "status": "done"}
    Then binding "b2" received 2 events
    When I bind "b1" on "session::status-changed" with config {}
    And I call "session::set-status" with {"session_id": "s1", "status": "idle"}
    Then binding "b1" received "status" values "idle"
    And binding "b2" received "status" values "working, done, idle"

  # Prevents: deliveries deduplicated per function/config instead of one per binding.
  Scenario: two matching bindings each get their own delivery
    Given a binding "b1" on "session::created" with config {"metadata": {"owner": "u1"}}
    And a binding "b2" on "session::created" with config {"metadata": {"owner": "u1"}}
    When I call "session::create" with {"metadata": {"owner": "u1", "x": 1}}
    Then binding "b1" received 1 event
    And binding "b2" received 1 event
    And binding "b1" last received exactly {"session_id": "s_001", "title": "", "description": "", "status": "idle", "created_at": 1000000}
