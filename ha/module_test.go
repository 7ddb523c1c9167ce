package ha_test

// modulePath is the module's import path, for the tests that read the
// module's sources.
const modulePath = "github.com/streamha/streamha"
