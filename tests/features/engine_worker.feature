Feature: session-manager on a real iii engine
  The worker binary, a fresh engine (III_BIN) and a client worker that calls functions and binds
  its own handler functions. Without III_BIN every scenario here is reported skipped.

  Background:
    Given a running engine with session-manager

  # Prevents: a function group that is registered but not routed, or routed to the wrong code.
  @engine @serial
  Scenario: every function group round-trips through the engine
    When the client calls "session::create" with {"title": "T", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    Then the engine response field "meta.title" is "T"
    When the client calls "session::ensure" with {"session_id": "s_fixed"}
    Then the engine response field "created" is true
    When the client calls "session::get" with {"session_id": "${sid}"}
    Then the engine response contains {"meta": {"session_id": "${sid}", "status": "idle"}}
    When the client calls "session::list" with {"metadata": {"owner": "u1"}}
    Then the engine response field "sessions" has 1 item
    When the client calls "session::set-meta" with {"session_id": "${sid}", "description": "d"}
    Then the engine call succeeds
    When the client calls "session::set-status" with {"session_id": "${sid}", "status": "working", "reason": "r"}
    Then the engine call succeeds
    When the client calls "session::set-draft" with {"session_id": "${sid}", "draft": "typing"}
    Then the engine call succeeds
    When the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}} and keeps "entry_id" as "e1"
    Then the engine response field "parent_id" is null
    When the client calls "session::append-many" with {"session_id": "${sid}", "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}], "timestamp": 2}, {"role": "user", "content": [{"type": "text", "text": "b"}], "timestamp": 3}]}
    Then the engine call succeeds
    When the client calls "session::update-message" with {"session_id": "${sid}", "entry_id": "${e1}", "content": [{"type": "text", "text": "hey"}]}
    Then the engine response contains {"updated": true, "revision": 1}
    When the client calls "session::get-message" with {"session_id": "${sid}", "entry_id": "${e1}"}
    Then the engine call succeeds
    When the client calls "session::messages" with {"session_id": "${sid}"}
    Then the engine response field "messages" has 3 items
    When the client calls "session::messages-tail" with {"session_id": "${sid}"}
    Then the engine call succeeds
    When the client calls "session::messages-range" with {"session_id": "${sid}", "entry_ids": ["${e1}"]}
    Then the engine call succeeds
    When the client calls "session::fork" with {"session_id": "${sid}", "entry_id": "${e1}"} and keeps "session_id" as "forked"
    Then the engine call succeeds
    When the client calls "session::set-active-leaf" with {"session_id": "${sid}", "entry_id": "${e1}"}
    Then the engine call succeeds
    When the client calls "session::put-attachment" with {"session_id": "${sid}", "name": "a.txt", "mime": "text/plain", "data": "aGk="} and keeps "attachment.attachment_id" as "att"
    Then the engine call succeeds
    When the client calls "session::get-attachment" with {"session_id": "${sid}", "attachment_id": "${att}"}
    Then the engine response field "data" is "aGk="
    When the client calls "session::list-attachments" with {"session_id": "${sid}"}
    Then the engine response field "attachments" has 1 item
    When the client calls "session::delete-attachment" with {"session_id": "${sid}", "attachment_id": "${att}"}
    Then the engine response field "deleted" is true
    When the client calls "session::store::list-metas" with {}
    Then the engine response field "metas" has 3 items
    When the client calls "session::store::get-active-leaf" with {"session_id": "${sid}"}
    Then the engine response field "entry_id" is "${e1}"
    When the client calls "session::config-status" with {}
    Then the engine response contains {"last_outcome": "applied", "rejected_reloads": 0}
    When the client calls "session::delete" with {"session_id": "${forked}"}
    Then the engine response field "deleted" is true

  # Prevents: error codes lost on the way through the engine (callers match on the code).
  @engine @serial
  Scenario: handler errors reach callers with their session/* code
    When the client calls "session::append" with {"session_id": "s_nope", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the engine call fails with code "session/not_found"
    When the client calls "session::append" with {"session_id": 5}
    Then the engine call fails with code "session/invalid_request"

  # Prevents: bindings that ignore filters, deliveries after unbind, or malformed configs accepted.
  @engine @serial
  Scenario: bind, filter, unbind and reject malformed configs
    Given handler "all" is bound to "session::created" with config {}
    And handler "mine" is bound to "session::created" with config {"metadata": {"owner": "u1"}}
    When the client calls "session::create" with {"title": "x", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    And the client calls "session::create" with {"title": "y", "metadata": {"owner": "u2"}}
    Then handler "all" receives 2 events
    And handler "mine" receives 1 event
    And handler "mine" event 1 contains {"session_id": "${sid}", "title": "x", "status": "idle"}
    Given handler "assistant" is bound to "session::message-added" with config {"session_id": "${sid}", "roles": ["assistant"]}
    And handler "msgs" is bound to "session::message-added" with config {"session_id": "${sid}"}
    When the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then handler "msgs" receives 1 event
    And handler "assistant" receives nothing
    When the client unbinds handler "msgs"
    And the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [], "timestamp": 2}}
    Then handler "msgs" receives 1 event
    When the client binds handler "bad" to "session::message-updated" with config {"session_id": "${sid}", "bogus": 1}
    Then the engine call fails mentioning "invalid session::message-updated config"
    And the engine call fails mentioning "unknown field"
    When the client binds handler "bad2" to "session::deleted" with config {"roles": ["user"]}
    Then the engine call fails mentioning "invalid session::deleted config"

  # Prevents: a trigger type that is registered but never delivers through the engine, or ignores its filter.
  @engine @serial
  Scenario: message-updated, status-changed, meta-updated and deleted deliver with their filters
    When the client calls "session::create" with {"title": "x", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    And the client calls "session::create" with {"title": "other"} and keeps "session_id" as "other"
    And the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}} and keeps "entry_id" as "e1"
    Given handler "upd" is bound to "session::message-updated" with config {"session_id": "${sid}", "roles": ["user"]}
    And handler "upd-assistant" is bound to "session::message-updated" with config {"roles": ["assistant"]}
    And handler "status" is bound to "session::status-changed" with config {"metadata": {"owner": "u1"}}
    And handler "meta" is bound to "session::meta-updated" with config {"session_id": "${sid}"}
    And handler "gone" is bound to "session::deleted" with config {"session_id": "${sid}"}
    When the client calls "session::update-message" with {"session_id": "${sid}", "entry_id": "${e1}", "content": [{"type": "text", "text": "hey"}]}
    And the client calls "session::set-status" with {"session_id": "${sid}", "status": "working", "reason": "thinking"}
    And the client calls "session::set-status" with {"session_id": "${other}", "status": "working", "reason": "elsewhere"}
    And the client calls "session::set-meta" with {"session_id": "${sid}", "title": "renamed"}
    And the client calls "session::set-meta" with {"session_id": "${other}", "title": "not mine"}
    And the client calls "session::delete" with {"session_id": "${other}"}
    And the client calls "session::delete" with {"session_id": "${sid}"}
    Then handler "upd" receives 1 event
    And handler "upd" event 1 contains {"session_id": "${sid}", "entry_id": "${e1}", "revision": 1}
    And handler "upd-assistant" receives nothing
    And handler "status" receives 1 event
    And handler "status" event 1 contains {"session_id": "${sid}", "status": "working", "previous_status": "idle", "status_reason": "thinking"}
    And handler "meta" receives 1 event
    And handler "meta" event 1 contains {"session_id": "${sid}", "title": "renamed"}
    And handler "gone" receives 1 event
    And handler "gone" event 1 contains {"session_id": "${sid}"}

  # Prevents: a second worker under a taken name retrying into a timeout that hides the cause.
  @engine @serial
  Scenario: a second worker with the same name fails at once with the engine's reason
    When the client calls "session::create" with {"title": "first"} and keeps "session_id" as "sid"
    Then a second worker with the same name exits within 10 seconds mentioning "WORKER_NAMESPACE_CONFLICT"
    When the client calls "session::get" with {"session_id": "${sid}"}
    Then the engine response field "meta.title" is "first"

  # Prevents: acknowledged writes lost when the worker dies without a clean shutdown.
  @engine @serial
  Scenario: a SIGKILLed worker restarts with everything it acknowledged
    When the client calls "session::create" with {"title": "durable"} and keeps "session_id" as "sid"
    And the client appends 40 messages to "${sid}" keeping the acknowledged ids
    And the worker is killed with SIGKILL and restarted
    Then the transcript of "${sid}" holds every acknowledged id in order
    When the client calls "session::get" with {"session_id": "${sid}"}
    Then the engine response contains {"meta": {"title": "durable", "message_count": 40}}

  # Prevents: hot reload that ignores new limits, swaps in an unbuildable adapter or forgets resync.
  @engine @serial
  Scenario: hot reload swaps limits, keeps last-good on a bad adapter and resyncs after a swap
    When the client calls "session::create" with {"title": "one"}
    And the client calls "session::create" with {"title": "two"}
    And the stored configuration is set to {"default_list_limit": 1}
    And the worker has reloaded the stored configuration
    Then the config status becomes {"last_outcome": "applied", "rejected_reloads": 0}
    When the client calls "session::list" with {}
    Then the engine response field "sessions" has 1 item
    When the stored configuration is set to {"adapter": {"name": "bridge", "config": {"url": "${engine_url}"}}}
    Then the config status becomes {"last_outcome": "rejected", "rejected_reloads": 1}
    When the client calls "session::list" with {"limit": 10}
    Then the engine response field "sessions" has 2 items
    Given handler "deleted" is bound to "session::deleted" with config {}
    When the stored configuration is set to {"adapter": {"name": "fs", "config": {"data_dir": "data/other"}}}
    Then the config status becomes {"last_outcome": "applied", "last_error": null, "rejected_reloads": 1}
    And handler "deleted" receives 2 events
    When the client calls "session::list" with {}
    Then the engine response field "sessions" has 0 items

  # Prevents: import / export registered on the worker but not reachable through the engine, or an import that a second call repeats.
  @engine @serial
  Scenario: another agent's file imports through the engine once and exports back
    When the client calls "session::import" with {"format": "ui-message", "file_name": "chat_9.json", "modified": 1000, "data": "[{\"id\":\"m1\",\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"Hi\"}]},{\"id\":\"m2\",\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Hello\"}]}]"}
    Then the engine response contains {"session_id": "chat_9", "outcome": "created", "entries": 2}
    When the client calls "session::import" with {"format": "ui-message", "file_name": "chat_9.json", "modified": 1000, "data": "[{\"id\":\"m1\",\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"Hi\"}]},{\"id\":\"m2\",\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Hello\"}]}]"}
    Then the engine response field "outcome" is "unchanged"
    When the client calls "session::export" with {"session_id": "chat_9", "format": "ui-message"}
    Then the engine response contains {"file_name": "chat_9.json", "entries": 2}
    When the client calls "session::import" with {"format": "pi", "data": "not a pi file"}
    Then the engine call fails with code "session/invalid_request"
