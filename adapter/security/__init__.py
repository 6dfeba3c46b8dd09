"""Authentication on the Thrift port: the password file (`password_file`), the SASL handshake
(`sasl`) and TLS (`tls`); `settings` turns serve's flags into what each connection needs."""
