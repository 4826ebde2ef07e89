"""`schemawise bench …`: each module measures one capability and returns one JSON document."""
