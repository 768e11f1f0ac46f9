"""The phone: reminders and answers through ntfy, built in (docs/phone.md).

- ``ntfy``: pure: the settings' checks (unguessable topics), new topics, the ``ntfy://`` link,
  the messages published (a reminder, its buttons, an outcome, a clear), a reply parsed.
- ``worker``: the process that talks HTTP to the ntfy server (publishes from a bounded queue,
  the reply topic's JSON stream with ``since=``), so that nothing on the relay loop waits for
  the network.
- ``channel``: the phone as a channel of the delivery plan (on the loop): reminders, their
  updates and clears by sequence id, the answers from the reply topic to the answerer.
- ``setup``: ``cuewrap phone`` (topics, QR code, a test round trip) and ``--check``.
"""
