package schedule

// UnmarshalTree is the reference reader, for the tests of package
// schedule_test.
var UnmarshalTree = unmarshalTree
