package authserver

// LimiterSizes reports how many (client, address) and address buckets the
// failure limiter holds.
func LimiterSizes(s *Server) (pairs, addrs int) { return s.failures.sizes() }

// MailsPending is how many sign-in mails are asked for and not yet sent
// (or found to be due to nobody).
func MailsPending(s *Server) int64 { return s.people.pending.Load() }
