Feature: session-manager started by iii compose
  An engine without the worker, then `iii compose up` in a temp project whose worker-compose.yaml
  is the README's: one container pointing at this repository with path:// and no `run:`, so
  compose starts the worker with iii.worker.yaml's scripts.start (the first start may build
  target/release). Without III_BIN every scenario here is reported skipped.

  # Prevents: a manifest or README snippet compose cannot start, ignored III_WORKER_NAME/III_COMPOSE_DIR, orphans after a stop.
  @engine @serial
  Scenario: iii compose starts the worker from iii.worker.yaml and stops it without orphans
    Given a running engine without session-manager
    When iii compose brings up a project whose container "sessions" points at this repository
    Then the engine lists a worker named "sessions" in namespace "default"
    And compose started the worker with the scripts.start of iii.worker.yaml
    And the client call "session::create" with {"title": "composed"} succeeds within 30 seconds and keeps "session_id" as "sid"
    When the client calls "session::append" with {"session_id": "${sid}", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}
    Then the engine call succeeds
    And the compose project's data dir "data/session-manager" holds 1 session file
    When iii compose is stopped with SIGTERM
    Then no process that compose started is left

  # Prevents: a worker started in a project namespace failing to boot (configuration::* looked up there) or serving outside it.
  @engine @serial
  Scenario: in a project namespace the worker boots, reads its configuration from default and serves there
    Given a running engine without session-manager
    When iii compose brings up a project in namespace "proj" whose container "sessions" points at this repository
    Then the engine lists a worker named "sessions" in namespace "proj"
    And the client call "session::create" with {"title": "namespaced"} succeeds within 30 seconds and keeps "session_id" as "sid"
    When the client calls "session::config-status" with {}
    Then the engine response contains {"last_outcome": "applied", "rejected_reloads": 0}
    And the compose project's data dir "data/session-manager" holds 1 session file
    When iii compose is stopped with SIGTERM
    Then no process that compose started is left
