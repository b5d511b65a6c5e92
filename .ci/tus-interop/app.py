"""tuspyserver's FastAPI router at /files, storing under $TUS_FILES_DIR; run with uvicorn."""
import os

from fastapi import FastAPI
from tuspyserver import create_tus_router

app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=os.environ["TUS_FILES_DIR"]))
