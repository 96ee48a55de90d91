import streamlit as st
st.title('incident')
