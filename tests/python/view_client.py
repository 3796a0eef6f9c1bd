"""Subscribes to every channel of a Foxglove WebSocket server (`arm_ik
... --view`) with the plain `websockets` client, listens for SECONDS from
the first message (the subscription's round trips, slow when a loaded
machine starves this process, are not part of it; a minute at most for
them) and prints one JSON object: per topic, the schema name and encoding, the messages
received and their rate (Hz, from the log times); the text of
/robot_description; the transforms of the last /tf and /tf_static; and
the number of messages that do not decode with rosbags' ROS 2 Jazzy type
store.

usage: view_client.py URL SECONDS
"""
import asyncio
import json
import struct
import sys

import websockets
from rosbags.typesys import Stores, get_typestore


async def main(url, seconds):
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    channels, subs, got = {}, {}, {}
    out = {'description': None, 'tf_frames': [], 'tf_static_frames': [], 'undecodable': 0}
    async with websockets.connect(url, subprotocols=['foxglove.sdk.v1'],
                                  max_size=None) as ws:
        loop = asyncio.get_running_loop()
        end, listening = loop.time() + 60, False
        while (left := end - loop.time()) > 0:
            try:
                raw = await asyncio.wait_for(ws.recv(), left)
            except (asyncio.TimeoutError, websockets.ConnectionClosed):
                break
            if isinstance(raw, str):
                msg = json.loads(raw)
                if msg.get('op') == 'advertise':
                    new = []
                    for c in msg['channels']:
                        channels[c['id']] = c
                        sid = len(subs) + 1
                        subs[sid] = c
                        new.append({'id': sid, 'channelId': c['id']})
                    await ws.send(json.dumps({'op': 'subscribe', 'subscriptions': new}))
                continue
            if raw[0] != 1:
                continue
            if not listening:
                end, listening = loop.time() + seconds, True
            sid, log_time = struct.unpack_from('<IQ', raw, 1)
            data = raw[13:]
            c = subs[sid]
            topic = c['topic']
            g = got.setdefault(topic, {'schema': c['schemaName'], 'encoding': c['encoding'],
                                       'count': 0, 'first': log_time, 'last': log_time})
            g['count'] += 1
            g['last'] = log_time
            try:
                m = jazzy.deserialize_cdr(data, c['schemaName'])
            except Exception:
                out['undecodable'] += 1
                continue
            if topic == '/robot_description':
                out['description'] = m.data
            elif topic in ('/tf', '/tf_static'):
                out[topic[1:] + '_frames'] = [
                    [t.header.frame_id, t.child_frame_id] for t in m.transforms]
    for g in got.values():
        span = (g['last'] - g['first']) / 1e9
        g['rate_hz'] = (g['count'] - 1) / span if span > 0 else 0.0
    out['topics'] = got
    print(json.dumps(out))


if __name__ == '__main__':
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
