Feature: the lifecycle through the engine
  Trash, restore and a time to live (issue 37) on a real engine: the worker sweeps expired
  sessions in the background within 2 s, and at its next start what expired while a kill -9 kept
  it down.

  # Prevents: an expired session outliving its expires_at on a running worker or across a kill -9,
  # and the lifecycle functions refusing the engine's payloads.
  @engine @serial
  Scenario: expired sessions are swept within 2 s, and at the next start after a kill -9
    Given a running engine with session-manager
    When the client calls "session::create" with {"title": "short-lived"} and keeps "session_id" as "a"
    And the client calls "session::create" with {"title": "kept"} and keeps "session_id" as "b"
    And the client calls "session::set-expiry" with {"session_id": "${a}", "expires_at": 0}
    Then the engine response contains {"session_id": "${a}", "expires_at": 0}
    And within 2000 ms the client call "session::get" with {"session_id": "${a}"} answers null
    When the client calls "session::create" with {"title": "outlives its worker"} and keeps "session_id" as "c"
    And the client keeps the time 1500 ms from now as "soon"
    And the client calls "session::set-expiry" with {"session_id": "${c}", "expires_at": ${soon}}
    And the worker is killed with SIGKILL, stays down 2500 ms and is restarted
    Then within 2000 ms the client call "session::get" with {"session_id": "${c}"} answers null
    When the client calls "session::trash" with {"session_id": "${b}"}
    Then the engine response field "trashed" is true
    When the client calls "session::list-trash" with {}
    Then the engine response field "total" is 1
    When the client calls "session::restore" with {"session_id": "${b}"}
    Then the engine response contains {"restored": true}
    When the client calls "session::get" with {"session_id": "${b}"}
    Then the engine response field "meta.title" is "kept"
    When the client calls "session::erase" with {"session_id": "${b}"}
    Then the engine response field "erased" is 1
