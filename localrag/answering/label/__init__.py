"""What a person reads: units with a label and a citation each, and their rendering."""
