"""The optional local model: `catalog` (what can be installed), `install` (assemble + verify),
`serve` (loopback, lifecycle). Nothing is imported here, so that mounting `schemawise model`
costs the command line no start-up time; import the submodules."""
