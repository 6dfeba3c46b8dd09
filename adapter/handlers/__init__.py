"""Thrift handlers, one module per API area; `adapter.router` puts them behind one service."""
