package audit

// Queued is how many events were ever put on w's queue (by Record or Commit).
func (w *Writer) Queued() int64 { return w.queued.Load() }
