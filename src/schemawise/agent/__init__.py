"""The assistant: a question becomes a checked answer (see `schemawise.agent.assistant`)."""
