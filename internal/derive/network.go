// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

// NetworkTime is the path outside the engine on one request: the client's
// TTFT minus its engine's TTFT (trace assembly joins the two spans), in
// seconds. It is Missing with NoReason when either TTFT is not known (no
// difference to take), and Missing with ClockSkew when the difference is
// negative: the client cannot see its first token before the engine made
// it, so the two hosts' clocks disagree, and a negative network time is
// never reported. Both inputs are within MaxSeconds, so the difference is.
func NetworkTime(client, engine Value) (Value, Reason) {
	if client.S != Known || engine.S != Known {
		return Value{}, NoReason
	}
	d := client.V - engine.V
	if d < 0 {
		return Value{}, ClockSkew
	}
	if r := CheckSeconds(d); r != NoReason {
		return Value{}, r
	}
	return known(d), NoReason
}

// JoinEngine sets res.NetworkTime from the engine's TTFT of the same
// request (a client span's result), recording why when it cannot be taken.
func (res *Result) JoinEngine(engineTTFT Value) {
	v, r := NetworkTime(res.TTFT, engineTTFT)
	res.NetworkTime = v
	if r != NoReason {
		res.Errors.Set(FieldNetworkTime, r)
	}
}
