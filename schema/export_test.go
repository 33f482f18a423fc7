package schema

// Suspect and SuspectPath are what the cleaning of stored text looks for,
// for the test that holds them to text.Clean.
var (
	Suspect     = suspect
	SuspectPath = suspectPath
)
