"""(door filled in the next commit)"""
