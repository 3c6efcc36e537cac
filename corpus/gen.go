package corpus

//go:generate go run ./internal/gen
