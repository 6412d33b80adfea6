"""What runs a plan: cases to calls, the call loop, findings, credit, diagnosis, explanations."""
