"""What a write judges of one row before it is made: the move listed and its roles, what it
waits for and its late rule, the lock, who may write which column, the stamps and codes a
rule writes, a refused value in plain words, and which moves are open to a guest now."""
