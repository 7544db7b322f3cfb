package limits

import "time"

// demand is how much a tenant has asked of the node lately: when it last asked for a
// place, and how many calls it asked for (admitted or refused) in the current window
// of activeFor and the one before, for a sliding estimate of its rate.
type demand struct {
	last      time.Time // the last call's
	start     time.Time // the current window's
	cur, prev int
	// whole is set once a whole window has been counted; until then the tenant has
	// been asking for less than activeFor (it is new, or was idle), and its rate is
	// taken over that time alone.
	whole bool
}

// ask counts a call asked for at now.
func (d *demand) ask(now time.Time) {
	d.roll(now)
	d.cur++
	d.last = now
}

// roll starts a new window when the current one is over.
func (d *demand) roll(now time.Time) {
	switch el := now.Sub(d.start); {
	case el < activeFor:
		return
	case el < 2*activeFor:
		d.prev, d.cur = d.cur, 0
		d.start = d.start.Add(activeFor)
		d.whole = true
	default:
		d.prev, d.cur = 0, 0
		d.start = now
		d.whole = false
	}
}

// rate is the calls asked for per activeFor, estimated: over the last activeFor, the
// current window's and the share of the previous one's that it still covers. A tenant
// asking for less than activeFor yet is measured over the time it has asked (at least
// a hundredth of activeFor): one that began to flood a moment ago has asked fewer
// calls in the last second than a steady neighbour, and must not pass for the lighter.
func (d *demand) rate(now time.Time) float64 {
	d.roll(now)
	el := now.Sub(d.start)
	if !d.whole {
		return float64(d.cur) * float64(activeFor) / float64(max(el, activeFor/100))
	}
	left := 1 - float64(el)/float64(activeFor)
	return float64(d.cur) + float64(d.prev)*left
}

// active reports whether the tenant asked within activeFor of now.
func (d *demand) active(now time.Time) bool {
	return now.Sub(d.last) <= activeFor
}
