"""The tuspy client as the peer: uploads FILE to URL with retries, prints the upload URL."""
import os
import sys

from tusclient import client

url, path = sys.argv[1], sys.argv[2]
metadata = {"filename": os.path.basename(path), "filetype": "application/octet-stream"}
uploader = client.TusClient(url).uploader(path, metadata=metadata, retries=10, retry_delay=0)
uploader.upload()
print(uploader.url)
