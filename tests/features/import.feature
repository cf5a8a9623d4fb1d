@pure
Feature: session::import and session::export
  Other agents' files (issue 40) come in as one session each and go out again: a rerun writes
  nothing, another session of the same id is left alone unless replace, a bad file changes
  nothing and says why.

  # Prevents: an imported file not becoming a readable session named after the file, or a rerun importing it twice.
  Scenario: an OpenAI items file becomes a session; importing it again writes nothing
    When I call "session::import" with:
      """
      {"format": "openai", "file_name": "exports/chat_42.json", "modified": 1000000, "metadata": {"owner": "u1"},
       "data": "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"Hi there\"},{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello!\"}]}]"}
      """
    Then the response is {"session_id": "chat_42", "outcome": "created", "entries": 2, "skipped": []}
    And the events fired are "session::created"
    When I call "session::list" with {"metadata": {"owner": "u1"}}
    Then the response ids at "sessions" are "chat_42"
    When I call "session::messages" with {"session_id": "chat_42"}
    Then the response field "messages" has 2 items
    When I call "session::import" with:
      """
      {"format": "openai", "file_name": "exports/chat_42.json", "modified": 1000000, "metadata": {"owner": "u1"},
       "data": "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"Hi there\"},{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello!\"}]}]"}
      """
    Then the response field "outcome" is "unchanged"
    And no events fired

  # Prevents: an import overwriting a session the store already holds under that id.
  Scenario: a session of the same id is left alone unless replace
    Given a session "chat_7"
    When I call "session::import" with:
      """
      {"format": "openai", "file_name": "chat_7.json", "data": "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"Imported\"}]"}
      """
    Then the response field "outcome" is "exists"
    And no events fired
    When I call "session::get" with {"session_id": "chat_7"}
    Then the response field "meta.message_count" is 0
    When I call "session::import" with:
      """
      {"format": "openai", "file_name": "chat_7.json", "replace": true, "data": "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"Imported\"}]"}
      """
    Then the response field "outcome" is "replaced"
    And the events fired are "session::deleted, session::created"
    When I call "session::get" with {"session_id": "chat_7"}
    Then the response field "meta.message_count" is 1

  # Prevents: a session the store wrote not going out in another agent's shape.
  Scenario: a session goes out as AI SDK UI messages, its active branch only
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text          | parent |
      | q1 | user      | hello         |        |
      | a1 | assistant | first answer  |        |
      | a2 | assistant | second answer | q1     |
    When I call "session::export" with {"session_id": "s1", "format": "ui-message"}
    Then the response contains {"session_id": "s1", "format": "ui-message", "file_name": "s1.json", "entries": 2}
    When I call "session::export" with {"session_id": "s1", "format": "pi"}
    Then the response contains {"file_name": "s1.jsonl", "entries": 3}
    When I call "session::export" with {"session_id": "nope", "format": "pi"}
    Then the call fails with "session/not_found"

  # Prevents: a bad file half-imported, or its error not saying what is wrong and where.
  Scenario: bad files are refused with the line at fault and change nothing
    When I call "session::import" with {"format": "pi", "file_name": "x.jsonl", "data": "{\"type\":\"session\",\"version\":3,\"id\":\"p1\",\"timestamp\":\"2026-12-07T10:00:00.000Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"id\":\"a1\",\"par"}
    Then the call fails with "session/invalid_request"
    And the error message contains "line 2"
    When I call "session::import" with {"format": "ui-message", "file_name": "x.jsonl", "data": "{\"type\":\"session\",\"version\":3,\"id\":\"p1\",\"timestamp\":\"2026-12-07T10:00:00.000Z\",\"cwd\":\"/\"}"}
    Then the call fails with "session/invalid_request"
    And the error message contains "looks like pi"
    When I call "session::import" with {"format": "markdown", "data": "# hi"}
    Then the call fails with "session/invalid_request"
    When I call "session::list"
    Then the response field "sessions" has 0 items
