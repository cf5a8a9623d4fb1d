Feature: live sync on a real iii engine: replicas that never miss a change
  Subscribers are functions of the test's own iii client bound to `session::changed` for one
  session. Each applies what it receives to a `Replica` in seq order, drops what it already has,
  and fills gaps from `session::changes` (pages of 5 after its applied seq). A turn is: a question,
  `working`, an assistant message streamed with `append-delta` (thinking, then seven text chunks),
  the question edited with `update-message`, `set-meta`, `idle`: 14 changes, every write retried
  until acknowledged. Without III_BIN every scenario here is reported skipped.

  Background:
    Given a running engine with session-manager

  # Prevents: a replica that silently loses the changes made while it was not bound, or applies one twice.
  @engine @serial
  Scenario: a subscriber unbound for a while fills the gap from session::changes and ends with every change exactly once
    When the client calls "session::create" with {"title": "live", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    And subscriber "a" follows "${sid}"
    And the client streams 2 turns into "${sid}"
    Then subscriber "a" reaches the latest seq of "${sid}"
    When subscriber "a" is unbound
    And the client streams 2 turns into "${sid}"
    And subscriber "a" is bound again
    Then subscriber "a" received none of the changes made while it was unbound
    When the client calls "session::set-status" with {"session_id": "${sid}", "status": "done", "reason": "finished"}
    Then subscriber "a" reaches the latest seq of "${sid}"
    And subscriber "a" read every change made while it was unbound from session::changes after a gap
    And subscriber "a" applied every seq of "${sid}" exactly once and agrees with a fresh read

  # Prevents: changes lost between a landed write and its delivery when the worker dies, acknowledged
  # writes lost, or a binding the restarted worker no longer serves.
  @engine @serial
  Scenario: a subscriber and the example replica follow a session through a SIGKILLed worker
    When the client calls "session::create" with {"title": "durable", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    And subscriber "b" follows "${sid}"
    And the client streams 1 turn into "${sid}"
    And the example replica follows "${sid}"
    And the client streams 6 turns into "${sid}" while the worker is killed with SIGKILL mid-flush after 30 acknowledged writes and restarted
    Then every write acknowledged to "${sid}" reads back
    And subscriber "b" reaches the latest seq of "${sid}"
    And subscriber "b" missed a delivery and read it from session::changes
    And subscriber "b" received deliveries after the restart
    And subscriber "b" applied every seq of "${sid}" exactly once and agrees with a fresh read
    And the example replica printed every seq of "${sid}" once and the streamed text of every turn

  # Prevents: a replica that starts after the feed was trimmed (feed_retention) and never recovers.
  @engine @serial
  Scenario: the example replica started after the feed was trimmed takes a snapshot, then follows
    When the stored configuration is set to {"feed_retention": 5}
    And the worker has reloaded the stored configuration
    Then the config status becomes {"last_outcome": "applied", "rejected_reloads": 0}
    When the client calls "session::create" with {"title": "trimmed"} and keeps "session_id" as "sid"
    And the client streams 2 turns into "${sid}"
    And the client calls "session::changes" with {"session_id": "${sid}", "after_seq": 0}
    Then the engine response contains {"changes": [], "latest_seq": 29, "truncated": true}
    When the example replica follows "${sid}"
    And the client streams 1 turn into "${sid}"
    Then the example replica printed a snapshot of "${sid}", then every later seq once and the streamed text of turn 3

  # Prevents: malformed session::changed configs accepted, or a types filter that is ignored.
  @engine @serial
  Scenario: session::changed bindings reject malformed configs and honour the types filter
    When the client binds handler "bad" to "session::changed" with config {"session_id": "s1", "bogus": 1}
    Then the engine call fails mentioning "invalid session::changed config"
    And the engine call fails mentioning "unknown field"
    When the client binds handler "bad2" to "session::changed" with config {"types": ["session::nope"]}
    Then the engine call fails mentioning "unknown change type"
    When the client binds handler "deltas" to "session::changed" with config {"types": ["session::message-delta"], "metadata": {"owner": "u1"}}
    Then the engine call succeeds
    When the client calls "session::create" with {"title": "mine", "metadata": {"owner": "u1"}} and keeps "session_id" as "sid"
    And the client calls "session::create" with {"title": "theirs", "metadata": {"owner": "u2"}} and keeps "session_id" as "other"
    And the client streams 1 turn into "${sid}"
    And the client streams 1 turn into "${other}"
    Then handler "deltas" receives 8 events
    And handler "deltas" received exactly the "session::message-delta" changes of "${sid}"
